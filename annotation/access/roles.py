"""Moved to ``annotation.corpus.roles`` (the people of a corpus are given a role when their account is
made, a layer below the access rule that reads it): kept only for ``frontend/dashboards/views.py``,
which still imports it from here (being moved by the slices of issue 32); delete once it imports it
from its home."""
from annotation.corpus.roles import ANNOTATOR, COORDINATOR, IMPORTED_ANNOTATOR, IMPORTED_MARK, role_group  # noqa: F401
