"""Moved to ``annotation.corpus.wording`` (the lowest concept that words a count): kept only for the
pages in ``frontend/`` that still import it from here (being moved by the slices of issue 32);
delete once they import it from its home."""
from annotation.corpus.wording import count_noun  # noqa: F401
