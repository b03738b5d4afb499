"""Cross-table invariants that a CHECK or UNIQUE constraint cannot express, as triggers.

The services validate the same rules first and give field-level messages; these triggers make
sure that nothing (raw SQL, a bug, a forgotten code path) can store a pyramid or an annotation
that breaks them. Each trigger's message says what is wrong.

SQLite rebuilds a table to alter it, and a rebuild fails while triggers elsewhere name that table.
So a migration that alters one of the tables named here must run ``drop`` first and ``create``
after (see 0004). The migration loader skips this module (its name starts with "_").
"""

# (name, table, condition that is a violation, message); NEW is the row being written.
RULES = [
    ("contributor_same_topic", "annotation_contributor",
     "(SELECT topic_id FROM annotation_referencesummary WHERE id = NEW.reference_id) <> "
     "(SELECT p.topic_id FROM annotation_scu s JOIN annotation_pyramid p ON p.id = s.pyramid_id WHERE s.id = NEW.scu_id)",
     "a contributor's reference summary must belong to the topic of its SCU's pyramid"),
    ("contributor_part_inside_text", "annotation_contributorpart",
     "NEW.\"end\" > (SELECT {length}(text) FROM annotation_referencesummary WHERE id = NEW.reference_id)",
     "a contributor part must end inside its reference summary's text"),
    ("contributor_part_own_reference", "annotation_contributorpart",
     "NEW.reference_id <> (SELECT reference_id FROM annotation_contributor WHERE id = NEW.contributor_id) AND "
     "(SELECT legacy_issue FROM annotation_contributor WHERE id = NEW.contributor_id) = ''",
     "a contributor part must lie in its contributor's reference summary"),
    ("contributor_part_same_topic", "annotation_contributorpart",
     "(SELECT topic_id FROM annotation_referencesummary WHERE id = NEW.reference_id) <> "
     "(SELECT topic_id FROM annotation_referencesummary WHERE id = (SELECT reference_id FROM annotation_contributor WHERE id = NEW.contributor_id))",
     "a contributor part must lie in a reference summary of its contributor's topic"),
    ("peer_match_same_pyramid", "annotation_peermatch",
     "NEW.scu_id IS NOT NULL AND (SELECT pyramid_id FROM annotation_scu WHERE id = NEW.scu_id) <> "
     "(SELECT pyramid_id FROM annotation_peerannotation WHERE id = NEW.annotation_id)",
     "a peer match's SCU must belong to the annotation's pyramid"),
    ("peer_part_inside_text", "annotation_peermatchpart",
     "NEW.\"end\" > (SELECT {length}(ps.text) FROM annotation_peersummary ps "
     "JOIN annotation_peerannotation pa ON pa.peer_id = ps.id JOIN annotation_peermatch pm ON pm.annotation_id = pa.id WHERE pm.id = NEW.match_id)",
     "a peer match part must end inside the peer summary's text"),
    ("annotation_same_topic", "annotation_peerannotation",
     "(SELECT topic_id FROM annotation_peersummary WHERE id = NEW.peer_id) <> (SELECT topic_id FROM annotation_pyramid WHERE id = NEW.pyramid_id)",
     "a peer annotation's pyramid must belong to the peer summary's topic"),
    ("reference_text_keeps_parts", "annotation_referencesummary",
     "EXISTS (SELECT 1 FROM annotation_contributorpart WHERE reference_id = NEW.id AND \"end\" > {length}(NEW.text))",
     "the new text of this reference summary would cut existing contributor parts"),
    ("peer_text_keeps_parts", "annotation_peersummary",
     "EXISTS (SELECT 1 FROM annotation_peermatchpart mp JOIN annotation_peermatch pm ON pm.id = mp.match_id "
     "JOIN annotation_peerannotation pa ON pa.id = pm.annotation_id WHERE pa.peer_id = NEW.id AND mp.\"end\" > {length}(NEW.text))",
     "the new text of this peer summary would cut existing match parts"),
]
UPDATE_ONLY = {"reference_text_keeps_parts", "peer_text_keeps_parts"}


def _quoted(message):
    return "'integrity: " + message.replace("'", "''") + "'"


def _sqlite(name, table, condition, message):
    condition = condition.format(length="length")
    events = ["UPDATE"] if name in UPDATE_ONLY else ["INSERT", "UPDATE"]
    return [
        f"CREATE TRIGGER {name}_{event.lower()} BEFORE {event} ON {table} FOR EACH ROW WHEN {condition} "
        f"BEGIN SELECT RAISE(ABORT, {_quoted(message)}); END;"
        for event in events
    ]


def _postgresql(name, table, condition, message):
    condition = condition.format(length="char_length")
    events = "UPDATE" if name in UPDATE_ONLY else "INSERT OR UPDATE"
    return [
        f"CREATE FUNCTION {name}_check() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF {condition} THEN RAISE EXCEPTION {_quoted(message)} USING ERRCODE = 'check_violation'; END IF; "
        f"RETURN NEW; END $$;",
        f"CREATE TRIGGER {name} BEFORE {events} ON {table} FOR EACH ROW EXECUTE FUNCTION {name}_check();",
    ]


def _drop(vendor, name, table):
    if vendor == "postgresql":
        return [f"DROP TRIGGER IF EXISTS {name} ON {table};", f"DROP FUNCTION IF EXISTS {name}_check();"]
    return [f"DROP TRIGGER IF EXISTS {name}_insert;", f"DROP TRIGGER IF EXISTS {name}_update;"]


def create(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    build = {"sqlite": _sqlite, "postgresql": _postgresql}.get(vendor)
    if build is None:
        raise RuntimeError(f"integrity triggers are written for SQLite and PostgreSQL, not {vendor}")
    for rule in RULES:
        for statement in build(*rule):
            schema_editor.execute(statement)


def drop(apps, schema_editor):
    for name, table, *_ in RULES:
        for statement in _drop(schema_editor.connection.vendor, name, table):
            schema_editor.execute(statement)
