"""The deliverer is a small process of its own: it never loads torch, transformers, Celery or the worker's
rooms (model, scheduling), and they never import it; it builds its bodies with the API's job view
(shared.contract.job_view), which loads no more than the contract. The source is read (a lazy import counts too), and
the process's modules are checked once it has loaded everything it runs with."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.stack import ROOT
from tests.worker.test_rooms import imported_modules

HEAVY = ("torch", "transformers", "sentencepiece", "celery", "worker.translation.model", "worker.translation")


def _crossing(folder: str, banned: tuple[str, ...]) -> set[str]:
    return {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in imported_modules(path)
        if any(name == b or name.startswith(b + ".") for b in banned)
    }


def test_the_deliverer_and_the_worker_rooms_import_nothing_of_each_other():
    assert not _crossing("worker/callbacks", HEAVY)
    assert not _crossing("worker/translation/model", ("worker.callbacks",)) and not _crossing(
        "worker/translation", ("worker.callbacks",)
    )


def test_the_running_deliverer_has_no_heavy_module_loaded():
    code = textwrap.dedent("""
        import sys
        import worker.callbacks.__main__, worker.callbacks.healthcheck
        from worker.callbacks.deliverer import Deliverer
        from shared.settings import Settings
        Deliverer(Settings(callback_secret="x" * 16))
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers", "sentencepiece", "celery")
                     or m.startswith(("worker.translation.model", "worker.translation", "api.app_services", "flask_limiter"))))
    """)
    loaded = subprocess.check_output([sys.executable, "-c", code], cwd=ROOT, text=True, env={"PATH": "/usr/bin:/bin"})
    assert loaded.strip() == "[]"
