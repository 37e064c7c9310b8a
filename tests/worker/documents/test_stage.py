"""The document stage's Celery app is made by its factory, never by importing the module (the stage
itself, running, is tested in tests/reliability/test_document_stage.py)."""

import importlib
import subprocess
import sys

from shared.celery_factory import DOCUMENT_TASK
from shared.store.keys import Keys
from tests.stack import ROOT, stack_settings
from worker.documents import stage


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
