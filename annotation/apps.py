from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Pyramids and annotations"

    def ready(self):
        # Score-affecting saves schedule a recomputation (see annotation/peers/score_events.py).
        # A password change revokes the user's API token (see annotation/access/token_revocation.py).
        # The API's base classes apply the access rule it registers (see annotation/api/access.py).
        from annotation.access import (
            rules,  # noqa: F401  (imported to register the access rule)
            token_revocation,  # noqa: F401  (imported for its signal receivers)
        )

        # An assignment's status follows its peers to re-annotate (see annotation/adjudication/reannotation.py).
        from annotation.adjudication import reannotation  # noqa: F401  (imported for its signal receivers)

        # Each concept registers its access rules with the one rule (annotation/access/rules.py).
        from annotation.lightweight import access as lightweight_access  # noqa: F401  (imported to register)
        from annotation.peers import access as peer_access  # noqa: F401  (imported to register)

        # The documents the audit history records register how it reads and writes them (see
        # annotation/history/changes.py: the history is a layer below them and imports neither).
        from annotation.peers import document_states as annotation_states  # noqa: F401  (imported to register)
        from annotation.peers import score_events  # noqa: F401  (imported for its signal receivers)
        from annotation.pyramids import access as pyramid_access  # noqa: F401  (imported to register)
        from annotation.pyramids import document_states as pyramid_states  # noqa: F401  (imported to register)
