"""What a test run makes once and its processes (pytest-xdist's workers) share instead of each making
its own: the fault and scale stacks' demo cluster (``tests/faults/harness.demo_cluster``) and the
workers' test database template (``tests/template_database.py``), each named by a hash of what it
is made from (``sources_digest``) so a change to the app's sources never meets one made before it."""

import fcntl
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from tests.conftest import REPO
from tests.faults import cleanup


def hashed_sources(root: Path) -> list[Path]:
    """What the app's databases are made from: its Python (the migrations, the models and signals
    they and the demo loader run, the loader itself)."""
    return sorted(
        path for package in ("annotation", "pyramid_app", "scoring") for path in (root / package).rglob("*.py")
    )


def sources_digest(*also: str, root: Path = REPO) -> str:
    """A hash of ``hashed_sources`` and of ``also`` (e.g. the PostgreSQL binaries a data directory
    belongs to): any change names another, never a stale one reused."""
    digest = hashlib.sha256("\0".join(also).encode())
    for path in hashed_sources(root):
        digest.update(f"\0{path.relative_to(root)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def made_once(name: str, make) -> Path:
    """The folder ``make(folder, record)`` filled, made once for this test run: the first process to
    ask makes it while the others wait on its lock, and a make that failed or was killed midway is
    made afresh by the next. Named ``name`` under ``cleanup.RUN_SCOPED``, owned by the run's process:
    swept once the run is over (``cleanup.sweep``), with the processes ``make`` noted in ``record``."""
    owner = cleanup.run_owner()
    home = Path(tempfile.gettempdir()) / f"{cleanup.RUN_SCOPED}{cleanup.ident(owner).replace(':', '-')}-{name}"
    home.mkdir(exist_ok=True)
    os.chmod(home, 0o755)  # e.g. PostgreSQL's user reaches its cluster inside
    made, building = home / "made", home / "building"
    with open(home / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.exists():
            record = cleanup.open_record(home, owner)
            shutil.rmtree(building, ignore_errors=True)
            building.mkdir()
            os.chmod(building, 0o755)
            make(building, record)
            building.rename(made)
    return made
