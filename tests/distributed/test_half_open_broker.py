"""The broker's host loses its TCP state behind a cut (its sockets destroyed while the link is down, as a
reboot or a NAT or firewall timeout does): the worker's consumer, blocked in BRPOP, sends nothing and so
never hears of it. With TCP keepalive and kombu's BRPOP check every `TRANSQ_REDIS_SOCKET_TIMEOUT` seconds
its connection is found dead within seconds of the link being usable (issue 38 measured about 30 s before;
kombu's own check alone takes up to 51 s), and jobs submitted after the heal are translated."""

from __future__ import annotations

import logging
import subprocess
import time

import pytest

from transq_cli.client import TransqClient, TransqError

pytestmark = pytest.mark.slow
log = logging.getLogger(__name__)


def _submit(client: TransqClient) -> dict:
    """Submit one job, again after a 503 (the same Idempotency-Key: one job)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return client.submit(["切断之后的句子。"], idempotency_key="after-the-heal")
        except TransqError as exc:
            log.warning("at the heal: %s", exc)
            if exc.status != 503 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_worker_consumes_again_after_the_broker_host_lost_its_connections_behind_a_cut(host_stack):
    s = host_stack(password="pw-Half-Open-4", workers=1, redis_socket_timeout=2.0)
    first = s.client.submit(["切断之前的句子。"])
    s.wait_status(first["id"], ("succeeded",), timeout=120)
    broker = s.hosts["broker"]
    s.network.cut(broker)
    # The broker's kernel forgets every connection to Redis (its resets are lost behind the cut).
    subprocess.run([*broker.launcher, "ss", "-K", "-tn", f"sport = :{s.redis.port}"], check=True, capture_output=True)
    time.sleep(3)
    s.network.heal(broker)
    healed = time.monotonic()
    job = _submit(s.client)
    done = s.wait_status(job["id"], ("succeeded", "failed"), timeout=180)
    log.warning(
        "half-open broker connections: a job submitted at the heal finished %.1f s later", time.monotonic() - healed
    )
    assert done["status"] == "succeeded"
    assert all(w.process.poll() is None for w in s.workers)  # the worker rode it out, nobody restarted it
