"""Fixtures of the API tests' world (``tests/api/world.py``), which these tests of the concept's API use."""

from tests.api.world import as_user, world  # noqa: F401  (fixtures)
