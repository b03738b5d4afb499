"""Fixtures of the set-up world (``tests/corpus/world.py``): coordinators, an annotator, a topic."""

from tests.corpus.world import people, topic  # noqa: F401  (fixtures)
