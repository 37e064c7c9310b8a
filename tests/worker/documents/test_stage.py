"""The document stage's Celery app is made by its factory, never by importing the module (the stage
itself, running, is tested in tests/reliability/test_document_stage.py)."""

import importlib
import os
import subprocess
import sys
from types import SimpleNamespace

from billiard.exceptions import WorkerLostError

from shared.celery_factory import DOCUMENT_TASK
from shared.store.job_record import Job, new_job_id, utc_now
from shared.store.job_status import JobStatus
from shared.store.jobs import JobStore
from shared.store.keys import Keys
from shared.store.stage_leases import StageLeases
from tests.stack import ROOT, stack_settings
from worker.documents import stage
from worker.documents.stage_lease import parent_prefix


def test_importing_the_stage_makes_no_app_and_reads_no_settings():
    code = (
        "import sys, worker.documents.stage as s; "
        "print('app' in vars(s), sorted(m for m in sys.modules if m.startswith(('worker.translation', 'api')) or m == 'torch'))"
    )
    env = {"PATH": "/usr/bin:/bin", "TRANSQ_DOCUMENT_TIME_LIMIT": "not a number"}  # reading it would fail
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "[]"]


def test_create_stage_makes_an_app_of_its_settings(tmp_path):
    settings = stack_settings("redis://127.0.0.1:1/0", tmp_path, document_time_limit=7, key_prefix="t1")
    app = stage.create_stage(settings)
    other = stage.create_stage(stack_settings("redis://127.0.0.1:1/0", tmp_path, key_prefix="t2"))
    app.finalize()
    other.finalize()
    assert DOCUMENT_TASK in app.tasks and app.tasks[DOCUMENT_TASK] is not other.tasks[DOCUMENT_TASK]
    assert app.conf.task_default_queue == Keys("t1").documents_queue
    assert (app.conf.task_soft_time_limit, app.conf.task_time_limit) == (7, 17)
    assert other.conf.task_default_queue == Keys("t2").documents_queue
    assert importlib.import_module("worker.documents.stage") is stage and "app" not in vars(stage)


def test_the_parent_fails_a_dead_pool_processs_job_unless_another_stage_took_it_over(
    redis_server, redis_client, tmp_path
):
    """A pool process dies (WorkerLostError in its Celery parent): its job fails `document_too_complex` with
    the fence of its take; a job another stage has taken over since (the dead process's lease lapsed) is
    left to that stage."""
    settings = stack_settings(redis_server.url, tmp_path)
    documents = stage.DocumentStage(settings)
    jobs, leases = JobStore(redis_client, Keys(), 100, 50), StageLeases(redis_client, Keys())
    ours, taken_over = (
        Job(id=new_job_id(), status=JobStatus.PARSING, texts=[], model="m", created_at=utc_now(), sentences_total=0)
        for _ in range(2)
    )
    for job in (ours, taken_over):
        jobs.create(job)
        leases.take(job.id, f"{parent_prefix()}{os.getpid() + 1}:a", 5, 3)
    redis_client.delete(Keys().stage_lease(taken_over.id))
    leases.take(taken_over.id, "another-host:7:8:b", 5, 3)
    task = SimpleNamespace(name=DOCUMENT_TASK)
    for job in (ours, taken_over):
        documents.killed(sender=task, exception=WorkerLostError(), args=[job.id])
    failed = jobs.get(ours.id)
    assert failed.status == JobStatus.FAILED and failed.error["code"] == "document_too_complex"
    assert jobs.get(taken_over.id).status == JobStatus.PARSING
