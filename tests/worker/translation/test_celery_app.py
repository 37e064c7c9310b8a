"""The worker's Celery app is built by a factory: importing its module makes no app, reads no settings and
imports no torch (only a pool process loads a model); `celery -A worker.translation.celery_main` finds the
app built from the environment."""

from __future__ import annotations

import os
import subprocess
import sys

from shared.routing.routes import route_for
from shared.settings import Settings
from shared.store.keys import Keys
from tests.stack import ROOT

CHECK_IMPORT = """
import sys
from celery._state import _apps
import worker.translation.celery_app
assert not list(_apps), list(_apps)
assert not [m for m in sys.modules if m.split(".")[0] in ("torch", "transformers")]  # the pool process's only
try:
    import worker.translation.celery_main
except ValueError as exc:
    print("celery_main:", exc)
"""

FIND_APP = """
from celery.app.utils import find_app
app = find_app("worker.translation.celery_main")
task = app.tasks["transq.translate_job"]
print(app.main, app.conf.task_default_queue, app.conf.broker_transport, task.process.settings.lease_seconds)
"""


def _python(code: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_the_app_module_makes_nothing():
    # Settings that cannot be read: only building the app (celery_main) reads them.
    out = _python(CHECK_IMPORT, TRANSQ_LOG_FORMAT="xml")
    assert out.startswith("celery_main: TRANSQ_LOG_FORMAT='xml'")


def test_celery_finds_the_app_built_from_the_environment():
    settings = Settings(key_prefix="celery-app-test:", lease_seconds=7.0)
    queue = Keys(settings.key_prefix).queue(route_for(settings).key)
    out = _python(FIND_APP, **settings.as_env()).split()
    assert out == ["transq-worker", queue, "shared.broker_transport:Transport", "7.0"]
