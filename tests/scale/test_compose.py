"""docker-compose.yml has the two-node shape (issue 22), checked statically (no Docker engine runs
where the tests do): `docker compose up --scale web=2 --scale worker=2` runs replicas behind the
proxy service, each without a host port of its own (two would clash), the migrations once before
any of them starts (never raced by two replicas), and beat as a service of its own, so scaling the
workers never adds a second beat."""

import re
import subprocess

import pytest
import yaml

from tests.conftest import REPO, require
from tests.scale.stack import HAPROXY

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
APP = ("web", "worker", "dashboards", "beat")


def command(service: dict) -> str:
    value = service.get("command", "")
    return " ".join(value) if isinstance(value, list) else value


def test_web_replicas_publish_no_port_only_the_proxy_does():
    assert "ports" not in SERVICES["web"] and SERVICES["web"]["expose"] == ["8000"]
    assert [name for name, service in SERVICES.items() if service.get("ports")] == ["proxy"]
    proxy = SERVICES["proxy"]
    assert proxy["image"].startswith("haproxy:") and proxy["ports"] == ["8000:8000"]
    assert proxy["depends_on"] == {"web": {"condition": "service_healthy"}}
    mounted = {volume.split(":")[0]: volume.split(":")[1] for volume in proxy["volumes"]}
    assert mounted == {"./deploy/haproxy.cfg": "/usr/local/etc/haproxy/haproxy.cfg"}
    # Behind the proxy the client's address is the one it appends (lockouts, throttles: tests/scale).
    assert all(SERVICES[name]["environment"]["TRUSTED_PROXY_COUNT"] == "${TRUSTED_PROXY_COUNT:-1}" for name in APP)
    assert all(
        SERVICES[name]["environment"]["TRUSTED_PROXIES"] == "${TRUSTED_PROXIES:-172.16.0.0/12,192.168.0.0/16}"
        for name in APP
    )


def test_the_proxy_balances_every_web_replica():
    config = (REPO / "deploy" / "haproxy.cfg").read_text()
    backend = config.split("\nbackend web\n", 1)[1]
    template = re.search(r"(?m)^\s*server-template web (\d+) web:(\d+) resolvers docker\b", backend)
    assert template and int(template[1]) >= 2 and template[2] == SERVICES["web"]["expose"][0]
    assert "--bind 0.0.0.0:8000" in command(SERVICES["web"])
    assert re.search(r"(?m)^\s*bind :8000$", config) and "option forwardfor" in config and "uri /healthz" in config


def test_migrations_run_once_before_the_app():
    migrate = SERVICES["migrate"]
    assert command(migrate) == "python manage.py migrate --noinput" and migrate["restart"] == "no"
    assert "deploy" not in migrate
    for name in APP:  # no replica migrates, and none starts before the migrations are done
        assert "migrate" not in command(SERVICES[name])
        assert SERVICES[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


def test_exactly_one_beat_whatever_the_workers():
    beats = [name for name, service in SERVICES.items() if re.search(r"\bbeat\b|\s-B\b|--beat\b", command(service))]
    assert beats == ["beat"]
    beat = SERVICES["beat"]
    assert command(beat).startswith("celery -A pyramid_app beat ")
    assert "scale" not in beat and "replicas" not in beat.get("deploy", {})
    assert all(
        "deploy" not in SERVICES[name] for name in ("worker", "dashboards")
    )  # scaled by --scale, never by a default


def test_haproxy_accepts_the_config(tmp_path):
    require(HAPROXY, "HAProxy is not installed (apt-get install haproxy)")
    checked = subprocess.run(
        [HAPROXY, "-c", "-f", str(REPO / "deploy" / "haproxy.cfg")], capture_output=True, text=True, cwd=tmp_path
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("name", APP)
def test_the_app_services_share_one_configuration(name):
    """Replicas and workers behave alike only with the same settings (one SECRET_KEY for sessions
    and CSRF on every node, tests/scale)."""
    assert SERVICES[name]["environment"] == SERVICES["web"]["environment"]
