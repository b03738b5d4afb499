from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Pyramids and annotations"

    def ready(self):
        """Import the modules that register with a lower layer, or receive signals: nothing else imports
        them (a package never imports one above it: the layer order, pyproject.toml)."""
        # Signal receivers: score-affecting saves schedule a recomputation (peers/score_events.py, which also
        # registers the history's revision hook); a password change revokes the user's API token
        # (access/token_revocation.py); an assignment's status follows its peers to re-annotate
        # (adjudication/reannotation.py).
        # The one access rule (access/rules.py), which the API's base classes apply (api/access.py), and each
        # concept's access rules registered with it (<concept>/access.py).
        # The documents the audit history records (history/changes.py), registered by the packages that own
        # them (<concept>/document_states.py).
        # Adjudication's part of the rule of what counts (adjudication/counting.py, for peers/results.py), and
        # the peers' scores that construction agreement's practical test compares (peers/construction_scores.py,
        # for pyramids/construction.py).
        import annotation.access.rules  # noqa: F401  (imported to register the access rule)
        import annotation.access.token_revocation  # noqa: F401  (imported for its signal receivers)
        import annotation.adjudication.counting  # noqa: F401  (imported to register)
        import annotation.adjudication.reannotation  # noqa: F401  (imported for its signal receivers)
        import annotation.lightweight.access  # noqa: F401  (imported to register)
        import annotation.peers.access  # noqa: F401  (imported to register)
        import annotation.peers.construction_scores  # noqa: F401  (imported to register)
        import annotation.peers.document_states  # noqa: F401  (imported to register)
        import annotation.peers.score_events  # noqa: F401  (imported for its signal receivers)
        import annotation.pyramids.access  # noqa: F401  (imported to register)
        import annotation.pyramids.document_states  # noqa: F401  (imported to register)

        # isort: split
        # What rests on a topic's texts (corpus/topic_editing.py), registered by each concept that keeps
        # something there in the order of the layers, the order the set-up pages list it in (kept apart
        # from the sorting of imports).
        import annotation.history.topic_editing  # noqa: F401  (imported to register)

        # isort: split
        import annotation.pyramids.topic_editing  # noqa: F401  (imported to register)

        # isort: split
        import annotation.peers.topic_editing  # noqa: F401  (imported to register)

        # isort: split
        import annotation.dashboards.topic_editing  # noqa: F401  (imported to register)

        # isort: split
        import annotation.lightweight.topic_editing  # noqa: F401  (imported to register)
