"""The API tests' world (``world.py``): one user of every role and clients logged in as each."""
from tests.api.world import _fast_password_hashing, as_user, world  # noqa: F401  (fixtures)
