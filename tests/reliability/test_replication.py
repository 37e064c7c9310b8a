"""With sentinels (so replicas), a job is accepted only once a replica has it (`WAIT 1`), else 503."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import redis

from devstack.redis_server import RedisServer
from devstack.sentinel import SentinelServer
from tests.stack import ApiProcess, stack_settings
from transq_cli.client import TransqClient, TransqError

pytestmark = pytest.mark.slow


def test_no_replica_no_202_and_the_job_is_not_kept_then_a_replica_makes_it_202(tmp_path, model_dir):
    with RedisServer() as primary:
        sentinel = SentinelServer(("127.0.0.1", primary.port), quorum=1).start()
        replica = None
        api = None
        try:
            settings = stack_settings(
                "redis://127.0.0.1:1/0",  # host and port unused: the sentinel names the master
                model_dir,
                cache_url="",
                redis_sentinels=sentinel.address,
                replica_wait_ms=300,
            )
            api = ApiProcess(settings, tmp_path / "api.log").start(workers=1)
            client = TransqClient(api.url)
            with pytest.raises(TransqError) as refused:
                client.submit(["没有副本的句子。"])
            assert refused.value.status == 503 and refused.value.code == "unavailable"
            assert "replica" in refused.value.message
            store = redis.Redis.from_url(primary.url, decode_responses=True)
            assert store.keys("transq:job:*") == []  # not accepted, not kept
            replica = RedisServer(extra_args=["--replicaof", "127.0.0.1", str(primary.port)]).start()
            deadline = time.monotonic() + 20
            while store.info("replication")["connected_slaves"] < 1 or not _synced(replica):
                assert time.monotonic() < deadline, "the replica did not sync"
                time.sleep(0.1)
            job = client.submit(["有副本的句子。"])
            replica_client = redis.Redis.from_url(replica.url, decode_responses=True)
            assert replica_client.exists(f"transq:job:{job['id']}")  # on the replica when 202 came back
        finally:
            for process in (api, sentinel, replica):
                if process is not None:
                    process.stop()


def _synced(replica: RedisServer) -> bool:
    return redis.Redis.from_url(replica.url, decode_responses=True).info("replication")["master_link_status"] == "up"


def _wait_is_blocked(primary: RedisServer) -> bool:
    """Whether a client of the primary is blocked in `WAIT` (the API waiting for a replica)."""
    clients = redis.Redis.from_url(primary.url, decode_responses=True).client_list()
    return any(c.get("cmd") == "wait" and "b" in c.get("flags", "") for c in clients)


def _submit_into(client: TransqClient, key: str, answer: dict) -> None:
    try:
        answer["job"] = client.submit(["故障之中的句子。"], idempotency_key=key)
    except TransqError as exc:
        answer["error"] = exc


def _jobs(store: redis.Redis) -> set[str]:
    return {k.rsplit(":", 1)[1] for k in store.scan_iter("transq:job:*")}


def _primary(sentinel: SentinelServer, gone: RedisServer | None) -> redis.Redis:
    """The primary the sentinel names once it is not `gone` (a killed one) and answers as a primary."""
    deadline = time.monotonic() + 60
    while True:
        address = sentinel.master_address()
        if address and (gone is None or address[1] != gone.port):
            store = redis.Redis(host=address[0], port=address[1], socket_timeout=2, decode_responses=True)
            try:
                if store.info("replication")["role"] == "master":
                    return store
            except redis.RedisError:
                pass
        assert time.monotonic() < deadline, "no primary after the failover"
        time.sleep(0.1)


def _submit_until_accepted(client: TransqClient, key: str) -> dict:
    deadline = time.monotonic() + 60
    while True:
        try:
            return client.submit(["故障之中的句子。"], idempotency_key=key)
        except TransqError as exc:
            if exc.status != 503 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.parametrize("fault", ["frozen", "killed"])
def test_a_primary_frozen_or_killed_mid_wait_never_leaves_a_job_answered_not_accepted(fault, tmp_path, model_dir):
    """The replicas are frozen, so the API's `WAIT` blocks; then the primary is frozen (SIGSTOP) until the API
    answers (its sentinel waits 60 s before a failover), or killed and a replica promoted. An answer "not
    accepted" must be true: no job kept (the old code answered a generic 503 and kept the job, queued: it ran,
    and a retry with the same Idempotency-Key answered it). An answer that cannot tell says so and names the
    job. Either way a retry with the same key ends with exactly one job."""
    primary = RedisServer().start()
    replicas = [RedisServer(extra_args=["--replicaof", "127.0.0.1", str(primary.port)]).start() for _ in range(2)]
    sentinel = api = None
    try:
        for replica in replicas:
            deadline = time.monotonic() + 20
            while not _synced(replica):
                assert time.monotonic() < deadline, "the replica did not sync"
                time.sleep(0.1)
        down_after = 60_000 if fault == "frozen" else 1000
        sentinel = SentinelServer(("127.0.0.1", primary.port), quorum=1, down_after_ms=down_after).start()
        settings = stack_settings(
            "redis://127.0.0.1:1/0", model_dir, cache_url="", redis_sentinels=sentinel.address, replica_wait_ms=1000
        )
        api = ApiProcess(settings, tmp_path / "api.log").start(workers=1)
        client = TransqClient(api.url)
        before = client.submit(["故障之前的句子。"], idempotency_key="before")  # on both replicas
        for replica in replicas:
            os.kill(replica.process.pid, signal.SIGSTOP)
        answer: dict = {}
        submitting = threading.Thread(target=_submit_into, args=(client, "during", answer))
        submitting.start()
        deadline = time.monotonic() + 10
        while not _wait_is_blocked(primary):
            assert time.monotonic() < deadline and submitting.is_alive(), f"the API never waited: {answer}"
            time.sleep(0.01)
        if fault == "frozen":  # until the API answers
            os.kill(primary.process.pid, signal.SIGSTOP)
        else:
            primary.kill()
            for replica in replicas:
                os.kill(replica.process.pid, signal.SIGCONT)
        submitting.join(timeout=90)
        for server in (primary, *replicas):
            if server.process.poll() is None:
                os.kill(server.process.pid, signal.SIGCONT)
        refused = answer.get("error")
        assert refused is not None and refused.status == 503 and refused.code == "unavailable", answer
        store = _primary(sentinel, primary if fault == "killed" else None)
        if "not accepted" in refused.message:  # then nothing of it is kept, nor its Idempotency-Key
            assert _jobs(store) == {before["id"]}, refused.message
        else:  # it could not tell: the answer names the job
            assert "may have been kept" in refused.message and "GET /v1/jobs/" in refused.message, refused.message
        again = _submit_until_accepted(client, "during")  # the same Idempotency-Key
        assert _jobs(store) == {before["id"], again["id"]}
    finally:
        for server in (primary, *replicas):
            if server.process and server.process.poll() is None:
                os.kill(server.process.pid, signal.SIGCONT)
        for process in (api, sentinel, primary, *replicas):
            if process is not None:
                process.stop()
