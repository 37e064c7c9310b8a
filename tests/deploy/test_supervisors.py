"""A process that exits is started again in every deployment form (issue 38 item 1): each compose service has a
restart policy that restarts a crash (docker-compose.yml, and docker-compose.host.yml, which only overrides
services of it), and every process in every Kubernetes overlay runs as a Deployment or a StatefulSet, whose
pods restart their containers (`restartPolicy: Always`, the only value these accept). A worker that gives up
(worker.translation.liveness.consumer_watch) or dies in a broker outage is then replaced, not left stopped."""

from __future__ import annotations

import yaml

from tests.deploy.conftest import ROOT

RESTARTING = {"always", "unless-stopped", "on-failure"}


def _services(name: str) -> dict[str, dict]:
    return yaml.safe_load((ROOT / name).read_text())["services"]


def test_every_compose_service_is_restarted_when_it_exits():
    services = _services("docker-compose.yml")
    assert {"worker", "document", "callbacks", "api", "redis"} <= set(services)
    for name, service in services.items():
        assert service.get("restart") in RESTARTING, name
    for name, service in _services("docker-compose.host.yml").items():
        base = services.get(name, {})
        assert service.get("restart", base.get("restart")) in RESTARTING, name


def test_every_kubernetes_process_is_supervised(rendered):
    workloads = [d for d in rendered["docs"] if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job", "Pod")]
    names = {d["metadata"]["name"] for d in workloads}
    assert any("worker" in n for n in names) and any("document" in n for n in names), names
    for workload in workloads:
        assert workload["kind"] in ("Deployment", "StatefulSet"), workload["metadata"]["name"]
        assert workload["spec"]["template"]["spec"].get("restartPolicy", "Always") == "Always"
