"""With sentinels (so replicas), a job is accepted only once a replica has it (`WAIT 1`), else 503."""

from __future__ import annotations

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
