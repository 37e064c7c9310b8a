"""The API process (and the document stage) never imports torch or transformers, and starts fast."""

import subprocess
import sys
import textwrap

from tests.stack import ROOT


def test_api_does_not_import_torch_or_transformers():
    code = textwrap.dedent("""
        import sys, time
        started = time.perf_counter()
        from api import create_app
        from worker.documents.stage import create_stage
        create_stage()  # the document stage's Celery app: no model either
        app = create_app()
        for rule in app.url_map.iter_rules():
            pass
        client = app.test_client()
        client.get("/healthz"); client.get("/openapi.json"); client.get("/")
        client.post("/v1/detect", json={"text": "Hello"})  # the language model loaded too
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers", "sentencepiece"))
        print(repr(heavy), time.perf_counter() - started)
    """)
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "TRANSQ_REDIS_URL": "redis://127.0.0.1:1/0"},
    )
    assert out.returncode == 0, out.stderr
    modules, seconds = out.stdout.rsplit(" ", 1)
    assert modules == "[]"
