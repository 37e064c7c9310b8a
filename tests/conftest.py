"""Shared fixtures: a tiny model built once, private Redis servers, a real worker and API."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Iterator

import pytest
import redis

from devstack.redis_server import RedisServer
from shared.routing.routes import route_for
from shared.store.keys import Keys
from tests.stack import ApiProcess, DocumentStageProcess, WorkerProcess, stack_settings
from transq_cli.client import TransqClient


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny MarianMT model with real sentencepiece tokenizers, built offline once per run."""
    from worker.translation.model.offline_model import make_test_model

    return make_test_model(tmp_path_factory.mktemp("model") / "tiny")


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_client(redis_server: RedisServer) -> redis.Redis:
    return redis.Redis.from_url(redis_server.url, decode_responses=True)


class Stack:
    """Redis + one worker + the document stage + the API, all real processes."""

    def __init__(self, tmp: Path, model_dir: Path, worker: bool = True, **overrides: object):
        self.tmp = tmp
        self.workers: list[WorkerProcess] = []
        self.api: ApiProcess | None = None
        self.documents: DocumentStageProcess | None = None
        self.redis = RedisServer(**{k: overrides.pop(k) for k in ("appendonly", "password") if k in overrides})
        self.settings = stack_settings(self.redis.url, model_dir, **overrides)
        self.want_worker = worker

    def start(self) -> Stack:
        """Start everything; close() stops whatever did start, even after a failure here."""
        self.redis.start()
        self.api = ApiProcess(self.settings, self.tmp / "api.log").start()
        self.client = TransqClient(self.api.url)
        self.r = redis.Redis.from_url(self.redis.url, decode_responses=True)
        self.documents = DocumentStageProcess(self.settings, self.tmp / "documents.log", name="documents")
        self.documents.start(wait_ready=False)
        if self.want_worker:
            self.add_worker()
        self.documents.wait_ready()
        return self

    def add_worker(self, name: str | None = None, wait_ready: bool = True, **overrides: object) -> WorkerProcess:
        name = name or f"w{len(self.workers) + 1}"
        settings = dataclasses.replace(self.settings, **overrides)
        worker = WorkerProcess(settings, self.tmp / f"{name}.log", name=name)
        self.workers.append(worker)
        return worker.start(wait_ready=wait_ready)

    @property
    def queue(self) -> str:
        """The Celery queue of the stack's model (its route)."""
        return Keys(self.settings.key_prefix).queue(route_for(self.settings).key)

    @property
    def pending(self) -> str:
        """The pending set of the stack's model (its route)."""
        return Keys(self.settings.key_prefix).pending(route_for(self.settings).key)

    def stat(self, name: str) -> int:
        return int(self.r.hget(f"{self.settings.key_prefix}stats", name) or 0)

    def wait_status(self, job_id: str, statuses: tuple[str, ...], timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            job = self.client.job(job_id)
            if job["status"] in statuses:
                return job
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} is {job['status']}, not {statuses}")
            time.sleep(0.05)

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        if self.documents is not None:
            self.documents.stop()
        if self.api is not None:
            self.api.stop()
        self.redis.stop()


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Iterator[Stack]:
    """One shared stack for the integration tests that do not break anything."""
    s = Stack(tmp_path_factory.mktemp("stack"), model_dir)
    try:
        yield s.start()
    finally:
        s.close()


@pytest.fixture
def make_stack(tmp_path: Path, model_dir: Path) -> Iterator:
    """A private stack for a test that kills or restarts things."""
    made: list[Stack] = []

    def make(**overrides: object) -> Stack:
        s = Stack(tmp_path, model_dir, **overrides)
        made.append(s)
        return s.start()

    yield make
    for s in made:
        s.close()
