"""The containers' own commands, run here as processes: with TRANSQ_LOG_FORMAT=json every line the API
(gunicorn's error and access lines included) and the worker (no Celery banner) write is one JSON
object, and the worker's node name says which container it runs in."""

import dataclasses
import json
import time

import pytest
import requests

from tests.stack import ApiProcess, WorkerProcess, stack_settings
from worker.translation.launch import node_name
from worker.translation.liveness.worker_id import container_id

pytestmark = pytest.mark.slow

MOUNTINFO = (
    "593 571 0:52 / / rw,relatime master:292 - overlay overlay rw\n"
    "612 593 253:1 /var/lib/docker/containers/4f2a9c1be0d7a31e5c8a7e1f1b4c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c/"
    "resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/vda1 rw\n"
)


def test_container_id_is_read_from_the_mounts():
    assert container_id(MOUNTINFO) == "4f2a9c1be0d7"
    assert node_name(MOUNTINFO).startswith("transq-4f2a9c1be0d7@")
    assert container_id("593 571 0:52 / / rw - overlay overlay rw\n") is None
    assert node_name("") != node_name("")  # outside a container: a random suffix, so names never collide


def _json_lines(text: str) -> list[dict]:
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines
    return [json.loads(line) for line in lines]  # fails on the first line that is not JSON


def test_every_api_line_is_json_access_lines_included(redis_server, tmp_path):
    settings = stack_settings(redis_server.url, tmp_path / "none", log_format="json")
    api = ApiProcess(settings, tmp_path / "api.log", extra_env={"GUNICORN_CMD_ARGS": "--access-logfile -"})
    try:
        api.start()
        requests.get(api.url + "/healthz", timeout=5)
        requests.post(api.url + "/v1/jobs", data="not json", headers={"Content-Type": "application/json"}, timeout=5)
    finally:
        api.stop()
    entries = _json_lines((tmp_path / "api.log").read_text())
    access = [e for e in entries if e["logger"] == "gunicorn.access"]
    assert {(e["method"], e["path"], e["status"]) for e in access} >= {
        ("GET", "/healthz", 200),
        ("POST", "/v1/jobs", 400),
    }
    assert any(e["logger"] == "gunicorn.error" for e in entries)  # "Booting worker …", "Listening at …"


def test_the_worker_command_writes_json_only_and_names_its_node(redis_server, tmp_path, model_dir):
    settings = dataclasses.replace(stack_settings(redis_server.url, model_dir), log_format="json")
    worker = WorkerProcess(settings, tmp_path / "worker.log", container_command=True)
    try:
        worker.start(wait_ready=True)
    finally:
        worker.stop()
    entries = _json_lines((tmp_path / "worker.log").read_text())
    assert any("loaded" in e["message"] for e in entries)
    assert any(e["message"].startswith("transq-") and e["message"].endswith("ready.") for e in entries)


def test_the_worker_command_logs_no_error_across_a_broker_restart(redis_server, tmp_path, model_dir):
    """A broker restart is a handled event: the worker reconnects, with no error in its log (Celery's
    gossip, which transq does not use, logged "Error on restarting Gossip: AttributeError(...)")."""
    settings = dataclasses.replace(stack_settings(redis_server.url, model_dir), log_format="json")
    log = tmp_path / "worker.log"
    worker = WorkerProcess(settings, log, container_command=True)

    def connected() -> int:
        return sum(e["message"].startswith("Connected to ") for e in _json_lines(log.read_text()))

    try:
        worker.start(wait_ready=True)
        redis_server.kill()
        time.sleep(3)  # a few reconnection attempts
        redis_server.start()  # the same port
        deadline = time.monotonic() + 60
        while connected() < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        worker.wait_ready(timeout=30)  # heartbeats again
        time.sleep(2)  # what the consumer's restart would log comes right after it connects
    finally:
        worker.stop()
    entries = _json_lines(log.read_text())
    assert connected() == 2, [e["message"] for e in entries]
    # While the broker is down Celery says so ("consumer: Cannot connect to …: Trying again"): that error
    # is the outage itself; anything else at ERROR (the gossip's "Error on restarting") is not.
    errors = [e for e in entries if e["level"] in ("ERROR", "CRITICAL") and "Cannot connect" not in e["message"]]
    assert not errors and not [e for e in entries if "Gossip" in e["message"]], errors
