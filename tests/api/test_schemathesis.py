"""Property-based tests of the whole API against its own OpenAPI schema (schemathesis).

Every operation of ``/api/schema/`` is called with generated requests, valid and invalid
(``max-examples`` each, fixed seed), in-process through the WSGI app, as a superuser with a token.
Checked: no response is a server error, and every documented response conforms to the schema.

Path ids are mapped onto objects that exist (the demo dataset: topic, references, pyramid, SCUs,
peers, two annotators' annotations), so most generated requests reach the views instead of stopping
at 404; every request runs in a savepoint that is rolled back, so each one sees the same data.
"""

import os
from contextlib import contextmanager

import hypothesis
import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (pip install -e '.[test]')")

from django.core import signals  # noqa: E402  (only once schemathesis is known to be installed)
from django.db import close_old_connections, transaction  # noqa: E402  (only once schemathesis is known to be installed)
from rest_framework.authtoken.models import Token  # noqa: E402  (only once schemathesis is known to be installed)
from schemathesis import GenerationMode  # noqa: E402  (only once schemathesis is known to be installed)
from schemathesis import checks as checks  # noqa: E402  (only once schemathesis is known to be installed)
from schemathesis.config import SchemathesisConfig  # noqa: E402  (only once schemathesis is known to be installed)

from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic  # noqa: E402  (only once schemathesis is known to be installed)
from annotation.peers.demo import load_demo  # noqa: E402  (only once schemathesis is known to be installed)
from annotation.peers.models import PeerAnnotation, PeerMatch  # noqa: E402  (only once schemathesis is known to be installed)
from annotation.pyramids.models import SCU, Contributor, Pyramid  # noqa: E402  (only once schemathesis is known to be installed)

from tests.conftest import recomputed_as_in_a_test  # noqa: E402  (only once schemathesis is known to be installed)

# The schemathesis test item does not list the ``db`` fixture where pytest-django looks for it
# when deciding which test databases to create: the marker says so.
pytestmark = pytest.mark.django_db

# Bounded for `make test` (about 25 s on 2 cores); explore further with e.g.
# SCHEMATHESIS_MAX_EXAMPLES=100 SCHEMATHESIS_SEED=7 pytest tests/api/test_schemathesis.py
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "10"))
CONFIG = {
    "seed": int(os.environ.get("SCHEMATHESIS_SEED", "20261121")),
    "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "database": "none", "no-shrink": True},
    "phases": {
        "examples": {"enabled": True},
        "coverage": {"enabled": False},
        "fuzzing": {"enabled": True},
        "stateful": {"enabled": False},
    },
    "suppress-health-check": ["all"],
}
RESOURCES = {
    "datasets": Dataset,
    "topics": Topic,
    "references": ReferenceSummary,
    "peers": PeerSummary,
    "pyramids": Pyramid,
    "scus": SCU,
    "contributors": Contributor,
    "annotations": PeerAnnotation,
    "matches": PeerMatch,
    "assignments": Assignment,
}


@contextmanager
def requests_keep_the_connection():
    """As Django's test client does: a request must not close the connection that holds the test's
    transaction (WSGIHandler's request signals would, on PostgreSQL)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture(scope="module")
def api_world(django_db_setup, django_db_blocker):
    """The demo dataset and a superuser's token, created once for the module (rolled back at the end)."""
    from django.contrib.auth.models import User

    with django_db_blocker.unblock(), requests_keep_the_connection():
        with transaction.atomic():
            with recomputed_as_in_a_test():
                load_demo()
            admin = User.objects.create_superuser("schemathesis", email=None, password=None)
            token = Token.objects.create(user=admin)
            ids = {
                name: list(model.objects.order_by("pk").values_list("pk", flat=True))
                for name, model in RESOURCES.items()
            }
            yield token.key, ids
            transaction.set_rollback(True)


def load_schema():
    """The schema as the app serves it, loaded at collection (no database access: the view is public)."""
    from pyramid_app.wsgi import application

    return schemathesis.openapi.from_wsgi("/api/schema/", application, config=SchemathesisConfig.from_dict(CONFIG))


schema = load_schema()


# What is checked: no server error; bodies, content types and headers as documented. Not checked:
# undocumented 4xx codes (drf-spectacular documents successes only), schema-valid requests refused
# for business rules (ids that do not exist, spans past the text), and the ignored-auth probe (the
# token is sent per call, so its replay without credentials is not meaningful here).
CHECKS = [
    checks.not_a_server_error,
    checks.response_schema_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
]


def existing_id(case, ids) -> None:
    """Point ``{id}`` at an object of that kind (by the generated number, so still varied)."""
    value = case.path_parameters.get("id") if case.path_parameters else None
    known = ids.get(case.path.split("/")[2], [])
    if isinstance(value, int) and known and value % 7:
        case.path_parameters["id"] = known[value % len(known)]


# One pytest item per operation, named by it (``[GET /api/annotations/]``). schemathesis's own
# ``schema.parametrize()`` gives all its items one node id under pytest 9, and pytest-xdist then ran
# and reported them as one test (98 of 99 operations silently dropped from a parallel run).
OPERATIONS = {result.ok().label: result.ok() for result in schema.get_all_operations()}


def generated_cases(operation):
    """Valid and invalid requests (schemathesis's positive and negative modes) and the schema's own
    examples, as one Hypothesis strategy."""
    return hypothesis.strategies.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
        *operation.get_strategies_from_examples(),
    )


@pytest.mark.parametrize("label", sorted(OPERATIONS))
def test_api_conforms_to_its_schema(label, api_world):
    key, ids = api_world
    operation = OPERATIONS[label]

    @hypothesis.seed(CONFIG["seed"])
    @hypothesis.settings(
        max_examples=MAX_EXAMPLES,
        database=None,
        deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck),
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
    )
    @hypothesis.given(case=generated_cases(operation))
    def conforms(case):
        existing_id(case, ids)
        with transaction.atomic():
            response = case.call(headers={"Authorization": f"Token {key}"})
            try:
                case.validate_response(response, checks=CHECKS)
            finally:
                transaction.set_rollback(True)

    conforms()
