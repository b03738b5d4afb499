from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Pyramids and annotations"

    def ready(self):
        # Score-affecting saves schedule a recomputation (see annotation/score_events.py).
        from . import score_events  # noqa: F401
