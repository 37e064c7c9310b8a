"""A worker's result written to a primary that is then demoted is not lost (issue 38 item 6).

The primary (r1) is cut off from the sentinels, its replicas and the API while the one worker, on a host of
its own, keeps reaching it: the sentinels promote a replica, and the worker still talks to r1, which thinks it
is the primary. Every server runs with the shipped `min-replicas-to-write 1`, `min-replicas-max-lag 10`
(devstack.sentinel.PRIMARY_ARGS): 10 s after it last heard from a replica, r1 refuses writes (-NOREPLICAS),
which transq reads as a connection error, so the worker reconnects through the sentinels to the new primary.

- `early`: the job's result reaches r1 within those 10 s and is acknowledged there, a write the new primary
  never sees. On the new primary the job is `running` with a lease nobody renews: once the worker is on it,
  its sweep takes the job over and finishes it again (a second attempt).
- `late`: the result is written after those 10 s: r1 refuses it, and the worker stores it on the new
  primary (its claim, replicated before the split, still holds: one attempt).

Before (no min-replicas-to-write, and -NOREPLICAS not a connection error) the worker stayed on r1 for as long as
the split lasted, and on the new primary, which the API and clients read, the job stayed `running`.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from shared.store.redis_client import broker_redis
from tests.distributed.test_failover import SentinelStack
from tests.reliability.conftest import slow_text

pytestmark = pytest.mark.slow

LEASE = 3.0


def _isolate(s: SentinelStack, host: str, keep: list[str]) -> None:
    """Cut `host` off from every other host but `keep`, both ways (a blackhole route on each side)."""
    for name, other in s.hosts.items():
        if name in (host, *keep):
            continue
        for source, target in ((s.hosts[host], other), (other, s.hosts[host])):
            subprocess.run(
                ["ip", "-n", source.namespace, "route", "add", "blackhole", f"{target.address}/32"],
                check=True,
                capture_output=True,
                timeout=30,
            )


def _on_the_primary(s: SentinelStack, job_id: str) -> dict:
    """The job's record on the primary the sentinels name now (a new connection each time: an old one
    may still reach the cut-off primary)."""
    client = broker_redis(s.settings)
    try:
        return client.hgetall(f"transq:job:{job_id}")
    finally:
        client.close()


@pytest.mark.parametrize("write", ["early", "late"])
def test_a_result_written_to_a_cut_off_primary_is_not_lost(write, network, tmp_path, model_dir):
    seconds = 4 if write == "early" else 18  # the job's one batch: its result is written this long after the cut
    with network.inside(network.add_host("client")):
        s = SentinelStack(network, tmp_path, model_dir, test_hooks=True, lease_seconds=LEASE, visibility_timeout=900)
        try:
            s.start(workers=1)
            job = s.client.submit([slow_text(seconds, f"分裂{write}")])
            deadline = time.monotonic() + 60
            while _on_the_primary(s, job["id"]).get("status") != "running":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            _isolate(s, "r1", keep=["w1"])
            cut = time.monotonic()
            deadline = cut + 120
            while True:
                found = {}
                try:
                    if s.master_host() != "r1":
                        found = _on_the_primary(s, job["id"])
                except Exception:  # noqa: BLE001 - the sentinels are failing over
                    pass
                if found.get("status") in ("succeeded", "failed"):
                    break
                assert time.monotonic() < deadline, f"on the new primary after {deadline - cut:.0f}s: {found}"
                time.sleep(0.2)
            print(f"\n{write}: final on the new primary {time.monotonic() - cut:.1f}s after the cut")
            assert found["status"] == "succeeded", found
            assert found["attempts"] == ("2" if write == "early" else "1"), found
            assert s.workers[0].process.poll() is None
        finally:
            s.close()
