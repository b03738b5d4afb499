"""Whom the work in a dataset archive is attributed to.

An archive's manifest names annotators, pyramid creators and adjudicators by username, and an
archive is a file anyone can write: a name in it is no proof that the account of that name here did
the work (an archive naming "admin" or "alice" must not put work under their accounts). So, unless
the importing coordinator maps a name to an account explicitly, every name becomes an *imported
annotator identity* (inactive, no login: ``ducview_import._annotator`` makes it): the one of that
name when the name is free or already an imported identity, else ``NAME@imported`` (then
``NAME@imported2``, ...), so that importing the archive again finds the same identities. An
adjudicator that is not mapped is left out (an identity adjudicates nothing; the report says so).

A mapping is ``ARCHIVE_NAME=USERNAME`` pairs, one per line or comma-separated (the command's
``--map-user``, the import page's field, the API's ``users`` field): each archive name must be one
the archive uses and each username an existing account here.
"""

import dataclasses
from collections.abc import Mapping

from django.contrib.auth import get_user_model

from annotation.corpus.roles import IMPORTED_ANNOTATOR
from annotation.transfer.archive import Archived

SUFFIX = "@imported"
MAX_NAMES = 500
MAX_MAP_CHARACTERS = 50_000


class NamesRejected(ValueError):
    """The mapping cannot be used as given; the message says what is wrong (nothing is imported)."""


def parse_user_map(text: str | None) -> dict[str, str]:
    """``ARCHIVE_NAME=USERNAME`` pairs (lines or commas) as a dict; NamesRejected says what is wrong."""
    if not text or not text.strip():
        return {}
    if len(text) > MAX_MAP_CHARACTERS:
        raise NamesRejected(f"the user mapping has more than {MAX_MAP_CHARACTERS:,} characters")
    mapping: dict[str, str] = {}
    for item in text.replace(",", "\n").splitlines():
        if not item.strip():
            continue
        name, equals, username = (part.strip() for part in item.partition("="))
        if not (equals and name and username):
            raise NamesRejected(f"{item.strip()[:80]!r} is not ARCHIVE_NAME=USERNAME")
        if mapping.get(name, username) != username:
            raise NamesRejected(f"{name[:80]!r} is mapped twice")
        mapping[name] = username
    if len(mapping) > MAX_NAMES:
        raise NamesRejected(f"more than {MAX_NAMES} names are mapped")
    return mapping


def names_in(records: Mapping[str, Archived]) -> set[str]:
    """Every username the manifest names: annotators, creators and adjudicators."""
    names = {record.user for record in records.values()}
    for record in records.values():
        for adjudication in (record.adjudication, record.pyramid_adjudication):
            names.add(adjudication.adjudicator if adjudication else None)
    return names - {None}


def attribute(records: Mapping[str, Archived], mapping: Mapping[str, str]) -> tuple[dict[str, Archived], list[str]]:
    """``records`` with every name replaced by the username its work goes to (see the module), and
    the notes for the import report. NamesRejected if the mapping names what the archive does not
    use or an account that does not exist."""
    named = names_in(records)
    unused = sorted(set(mapping) - named)
    if unused:
        raise NamesRejected(f"the archive names nobody called {unused[0][:80]!r}: map only names it uses")
    wanted = set(mapping.values())
    accounts = set(get_user_model().objects.filter(username__in=wanted).values_list("username", flat=True))
    missing = sorted(set(mapping.values()) - accounts)
    if missing:
        raise NamesRejected(f"there is no account {missing[0][:80]!r} here to attribute work to")
    users = {name: mapping.get(name) or identity_name(name) for name in named}
    notes = [
        f"{name!r} of the archive: its work goes to the imported identity {users[name]!r} (not mapped to an account)"
        for name in sorted(named - set(mapping))
        if name != users[name]
    ]
    attributed = {}
    for path, record in records.items():
        changes = {"user": users.get(record.user)}
        for key in ("adjudication", "pyramid_adjudication"):
            adjudication = getattr(record, key)
            if adjudication is not None and adjudication.adjudicator is not None:
                adjudicator = mapping.get(adjudication.adjudicator)
                if adjudicator is None:
                    notes.append(
                        f"{path}: its adjudicator {adjudication.adjudicator!r} is mapped to no account here: "
                        "restored without adjudicator"
                    )
                changes[key] = dataclasses.replace(adjudication, adjudicator=adjudicator)
        attributed[path] = dataclasses.replace(record, **changes)
    return attributed, notes


def identity_name(name: str) -> str:
    """The username of the imported identity a name becomes: the name itself when it is free or an
    imported identity already, else the name with ``SUFFIX`` (numbered from 2 when that is taken)."""
    users = get_user_model().objects
    limit = users.model._meta.get_field("username").max_length
    candidates = [name] + [f"{name[: limit - len(SUFFIX) - 3]}{SUFFIX}{n if n > 1 else ''}" for n in range(1, 100)]
    taken = {user.username: user for user in users.filter(username__in=candidates).prefetch_related("groups")}
    for candidate in candidates:
        user = taken.get(candidate)
        if user is None or (not user.is_active and any(g.name == IMPORTED_ANNOTATOR for g in user.groups.all())):
            return candidate
    raise NamesRejected(f"no free name for an imported identity of {name[:80]!r}")
