"""Two language pairs end to end: two offline models (zh-en, en-zh), a worker each, one API. Jobs of
each pair reach only that pair's workers; with one pair's workers stopped the other still finishes, and
the stopped pair's jobs wait and finish when a worker of theirs starts."""

import json
import subprocess
import sys
import time

import pytest
import requests

from tests.stack import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def en_zh_model(tmp_path_factory):
    from worker.translation.model.offline_model import make_test_model

    return make_test_model(tmp_path_factory.mktemp("model-en-zh") / "tiny", pair="en-zh")


def post(stack, body):
    return requests.post(stack.api.url + "/v1/jobs", json=body, timeout=10)


def served_by(stack, job_id: str) -> str:
    """The route of the worker that ran the job, from that worker's heartbeat."""
    worker = stack.r.hget(f"transq:job:{job_id}", "worker")
    return json.loads(stack.r.get(f"transq:worker:{worker}"))["route"]


def test_two_pairs_route_to_their_own_workers(make_stack, en_zh_model):
    s = make_stack(worker=False)
    zh_en = s.add_worker("zh-en")
    en_zh = s.add_worker("en-zh", model=str(en_zh_model))
    pairs = requests.get(s.api.url + "/v1/languages", timeout=5).json()["pairs"]
    assert [(p["source_lang"], p["target_lang"], p["workers"]) for p in pairs] == [("en", "zh", 1), ("zh", "en", 1)]
    assert requests.get(s.api.url + "/readyz", timeout=5).json()["pairs"] == {"en-zh": 1, "zh-en": 1}

    chinese = post(s, {"text": "今天天气很好。", "source_lang": "zh", "target_lang": "en"}).json()
    english = post(s, {"text": "The weather is fine today.", "source_lang": "en", "target_lang": "zh"}).json()
    for job, pair in ((chinese, "zh-en"), (english, "en-zh")):
        done = s.client.wait(job["id"], timeout=60)
        assert done["status"] == "succeeded", done
        assert served_by(s, job["id"]).startswith(pair + "-")
    assert s.client.job(english["id"])["model"] == str(en_zh_model)

    # With two pairs served a request naming neither language goes to TRANSQ_DEFAULT_PAIR (zh-en), and an
    # unserved pair is refused naming those served.
    unnamed = post(s, {"text": "哪一种？"})
    assert unnamed.status_code == 202 and s.client.wait(unnamed.json()["id"], timeout=60)["status"] == "succeeded"
    assert served_by(s, unnamed.json()["id"]).startswith("zh-en-")
    french = post(s, {"text": "Bonjour.", "source_lang": "fr", "target_lang": "en"})
    assert french.status_code == 422 and "en-zh, zh-en" in french.json()["error"]["message"]
    assert post(s, {"text": "Only the target.", "target_lang": "zh"}).status_code == 202  # one pair fits

    # source_lang "auto": the texts' language chooses the pair, and the job shows what was detected.
    for text, source, pair in (("天气预报说明天下雨。", "zh", "zh-en"), ("The forecast says rain.", "en", "en-zh")):
        detected = post(s, {"text": text, "source_lang": "auto"})
        assert detected.status_code == 202, detected.text
        assert detected.json()["detected"]["language"] == source and detected.json()["detected"]["confidence"] > 0.5
        assert s.client.wait(detected.json()["id"], timeout=60)["status"] == "succeeded"
        assert served_by(s, detected.json()["id"]).startswith(pair + "-")
    unserved = post(s, {"text": "Il fait très beau aujourd'hui.", "source_lang": "auto"})
    assert unserved.status_code == 422 and "'fr'" in unserved.json()["error"]["message"]

    # A document's language is detected by the document stage once it has parsed it: the job has no model
    # until then, then the detected pair's; so with no language named while two pairs are served.
    page = b"<html><body><p>The forecast says rain.</p></body></html>"
    sent = requests.post(
        s.api.url + "/v1/documents", files={"file": ("rain.html", page)}, data={"source_lang": "auto"}, timeout=10
    )
    assert sent.status_code == 202 and sent.json()["model"] is None, sent.text
    unnamed_document = post(s, {"texts": ["# 天气预报\n"], "format": "markdown"}).json()
    done = s.client.wait(sent.json()["id"], timeout=60)
    assert done["status"] == "succeeded" and done["detected"]["language"] == "en", done
    assert done["model"] == str(en_zh_model)  # the en-zh route's
    named = requests.get(f"{s.api.url}/v1/jobs/{done['id']}/document", timeout=10).headers["Content-Disposition"]
    assert 'filename="rain.zh.html"' in named
    done = s.client.wait(unnamed_document["id"], timeout=60)
    assert done["detected"]["language"] == "zh" and done["model"] == s.settings.model
    french = post(s, {"texts": ["Il fait très beau aujourd'hui.\n"], "format": "markdown", "source_lang": "auto"})
    failed = s.client.wait(french.json()["id"], timeout=60)
    assert failed["status"] == "failed" and failed["error"]["code"] == "unsupported_language_pair", failed
    assert "'fr'" in failed["error"]["message"] and failed["model"] is None
    assert post(s, {"texts": ["x"], "format": "html", "source_lang": "auto", "target_lang": "fr"}).status_code == 422

    # One pair's worker stops: the other pair still finishes; the stopped pair's jobs wait for theirs.
    en_zh.stop()
    waiting = post(s, {"text": "Waiting for a worker.", "source_lang": "en", "target_lang": "zh"}).json()
    flowing = post(s, {"text": "别的语言照常。", "source_lang": "zh", "target_lang": "en"}).json()
    assert s.client.wait(flowing["id"], timeout=60)["status"] == "succeeded"
    time.sleep(2)
    assert s.client.job(waiting["id"])["status"] == "queued"
    assert served_by(s, flowing["id"]).startswith("zh-en-")
    s.add_worker("en-zh-2", model=str(en_zh_model))
    assert s.client.wait(waiting["id"], timeout=60)["status"] == "succeeded"
    assert served_by(s, waiting["id"]).startswith("en-zh-")
    assert zh_en.process.poll() is None


def test_the_cli_names_the_pair(make_stack, en_zh_model, tmp_path):
    s = make_stack(worker=False)
    s.add_worker("en-zh", model=str(en_zh_model))
    source = tmp_path / "notes.txt"
    source.write_text("First paragraph.\n\nSecond one.", encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "transq_cli.main",
            "translate",
            str(source),
            "--from",
            "en",
            "--to",
            "zh",
            "--url",
            s.api.url,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "\n\n" in result.stdout  # both paragraphs came back, in place
    jobs = [s.r.hgetall(k) for k in s.r.keys("transq:job:*")]
    assert [j["model"] for j in jobs] == [str(en_zh_model)]


def test_the_cli_never_imports_the_worker():
    code = "import sys, transq_cli.main, transq_cli.translate_file; print(sorted(m for m in sys.modules if m.split('.')[0] in ('worker', 'torch')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr
