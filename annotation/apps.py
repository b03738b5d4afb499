from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Pyramids and annotations"

    def ready(self):
        # Score-affecting saves schedule a recomputation (see annotation/peers/score_events.py).
        from annotation.peers import score_events  # noqa: F401  (imported for its signal receivers)
        # A password change revokes the user's API token (see annotation/access/token_revocation.py).
        from annotation.access import token_revocation  # noqa: F401  (imported for its signal receivers)
        # An assignment's status follows its peers to re-annotate (see annotation/adjudication/reannotation.py).
        from annotation.adjudication import reannotation  # noqa: F401  (imported for its signal receivers)
        # The API's base classes apply the access rule it registers (see annotation/api/access.py).
        from annotation.access import rules  # noqa: F401  (imported to register the access rule)
