"""The API tests' world (``world.py``): one user of every role and clients logged in as each."""

from tests.api.world import as_user, world  # noqa: F401  (fixtures)
