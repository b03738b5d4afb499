"""Fixtures of the set-up world (``tests/corpus/world.py``): coordinators, an annotator, a topic."""
from tests.corpus.world import _fast_password_hashing, people, topic  # noqa: F401  (fixtures)
