"""Every Celery consumer survives any number of Sentinel failovers (issue 38 item 1).

A primary, two replicas and three sentinels on loopback (devstack.sentinel.SentinelCluster), the API, two
translation workers and two document stages on them. Three times, while each of the four consumers runs a
slow job (its message delivered and not yet acknowledged: the case that stopped workers), the primary is
SIGKILLed; every job finishes on the new primary, every process is still running, and the next jobs are taken
by each consumer, so each still consumes. The killed server rejoins as a replica before the next round.

Before shared.broker_transport's Sentinel channel, closing the dead connection's channel raised
AttributeError("'NoneType' object has no attribute 'hostname'") and Celery stopped the worker ("Unrecoverable
error"). The sentinels here say a master is down after 2 s (production: devstack.sentinel.DOWN_AFTER_MS) and
may fail over again after 12 s, so that three failovers fit in one test.
"""

from __future__ import annotations

import io
import logging
import time
from pathlib import Path

import pytest
import redis
import requests

from devstack.sentinel import SentinelCluster
from shared.store.redis_client import broker_redis
from tests.reliability.conftest import slow_text
from tests.stack import ApiProcess, DocumentStageProcess, WorkerProcess, stack_settings
from transq_cli.client import TransqClient, TransqError

pytestmark = pytest.mark.slow
log = logging.getLogger(__name__)

FAILOVERS = 3
DOWN_AFTER_MS = 2000
FAILOVER_TIMEOUT_MS = 6000  # Sentinel fails the same master name over again only after twice this
SLEEP = 4  # seconds each job's test hook sleeps, so that the primary dies while every consumer holds one


class FailoverStack:
    def __init__(self, tmp: Path, model_dir: Path):
        self.tmp = tmp
        self.cluster = SentinelCluster(down_after_ms=DOWN_AFTER_MS, failover_timeout_ms=FAILOVER_TIMEOUT_MS)
        self.settings = stack_settings(
            f"redis://127.0.0.1:{self.cluster.ports[0]}/0",  # only its db counts with sentinels
            model_dir,
            cache_url="",
            redis_sentinels=self.cluster.addresses,
            redis_master="transq",
            test_hooks=True,
            max_round_sentences=1,  # one job per round: two slow jobs keep both workers busy
            document_lease_seconds=2.0,
            visibility_timeout=60,
            task_soft_time_limit=20,
            task_time_limit=30,
            document_time_limit=30,
        )
        self.processes: list[WorkerProcess] = []
        self.api: ApiProcess | None = None

    def start(self) -> FailoverStack:
        self.cluster.start()
        self.api = ApiProcess(self.settings, self.tmp / "api.log").start()
        self.client = TransqClient(self.api.url)
        self.workers = [WorkerProcess(self.settings, self.tmp / f"w{i}.log", name=f"w{i}") for i in (1, 2)]
        self.stages = [
            DocumentStageProcess(self.settings, self.tmp / f"documents{i}.log", name=f"documents{i}") for i in (1, 2)
        ]
        self.processes = [*self.workers, *self.stages]
        for process in self.processes:
            process.start(wait_ready=False)
        for process in self.processes:
            process.wait_ready(timeout=240)
        return self

    def r(self) -> redis.Redis:
        """The primary the sentinels name now."""
        return broker_redis(self.settings)

    def close(self) -> None:
        for process in self.processes:
            process.stop()
        if self.api is not None:
            self.api.stop()
        self.cluster.stop()


def _until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = check()
            if found:
                return found
        except Exception:  # noqa: BLE001 - the broker may be failing over
            pass
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout}s"
        time.sleep(0.1)


def _submit(s: FailoverStack, texts: list[str]) -> str:
    def accepted():
        try:
            return s.client.submit(texts)["id"]
        except TransqError as exc:
            if exc.status not in (0, 503):
                raise
            return None

    return _until(accepted, 60, "a submission accepted")


def _upload(s: FailoverStack, text: str, name: str) -> str:
    def accepted():
        response = requests.post(
            s.api.url + "/v1/documents", files={"file": (name, io.BytesIO(text.encode()))}, timeout=30
        )
        return response.json()["id"] if response.status_code == 202 else None

    return _until(accepted, 60, "an upload accepted")


def _busy_round(s: FailoverStack, n: int) -> tuple[list[str], list[str]]:
    """Two slow text jobs and two slow documents, once each consumer holds one of them: their ids."""
    jobs = [_submit(s, [slow_text(SLEEP, f"第{n}轮第{i}个")]) for i in (1, 2)]
    documents = [_upload(s, f"# 第{n}轮\n\n文件{i}TRANSQ-STAGE-SLEEP{SLEEP}。\n", f"round{n}-{i}.md") for i in (1, 2)]

    def held_by_each() -> bool:
        r = s.r()
        workers = [r.hget(f"transq:job:{j}", "worker") or "" for j in jobs]
        stages = [r.hget(f"transq:job:{d}", "stage") or "" for d in documents]
        return all(any(w.holds(h) for h in workers) for w in s.workers) and all(
            any(h.split(":")[1:2] == [str(st.process.pid)] for h in stages) for st in s.stages
        )

    _until(held_by_each, 90, f"round {n}: each worker and each stage holding one of its jobs")
    return jobs, documents


def _exited(s: FailoverStack) -> list[str]:
    return [p.name for p in s.processes if p.process is None or p.process.poll() is not None]


def test_every_worker_and_document_stage_survives_repeated_primary_kills(tmp_path, model_dir):
    s = FailoverStack(tmp_path, model_dir)
    try:
        s.start()
        for n in range(1, FAILOVERS + 1):
            jobs, documents = _busy_round(s, n)
            killed_at = time.monotonic()
            old = s.cluster.kill_primary()
            new = s.cluster.wait_failover(old)
            log.warning("failover %d: port %d -> %d in %.1fs", n, old, new, time.monotonic() - killed_at)
            for job_id in [*jobs, *documents]:
                done = _until(
                    lambda j=job_id: s.client.job(j)["status"] in ("succeeded", "failed") and s.client.job(j),
                    120,
                    f"job {job_id} final after failover {n}",
                )
                assert done["status"] == "succeeded", (done, s.r().hgetall(f"transq:job:{job_id}"))
            assert not _exited(s), f"exited after failover {n}: {_exited(s)}: " + "".join(
                p.log_tail(3000) for p in s.processes if p.process.poll() is not None
            )
            s.cluster.rejoin(old)
            time.sleep(max(0.0, 2 * FAILOVER_TIMEOUT_MS / 1000 - (time.monotonic() - killed_at)))
        _busy_round(s, FAILOVERS + 1)  # each consumer still takes jobs after the last failover
        assert not _exited(s)
        for process in s.processes:
            assert "Unrecoverable error" not in process.log_tail(1_000_000), process.name
    finally:
        s.close()
