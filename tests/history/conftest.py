"""The history tests' world: the API tests' (``tests/api/world.py``)."""

from tests.api.world import world  # noqa: F401  (fixture)
