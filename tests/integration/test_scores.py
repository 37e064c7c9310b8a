"""Confidence scores end to end (issue 24, part 5): asked for with `"scores": true`, each translated sentence's
score comes back with the job, from the worker's decoder or the sentence cache, with the job's summary."""

import pytest
import requests

pytestmark = pytest.mark.slow

VIEW_KEYS = {"id", "status", "created_at", "started_at", "finished_at", "progress", "cached_sentences", "model"}


def post(stack, body: dict) -> dict:
    response = requests.post(stack.api.url + "/v1/jobs", json=body, timeout=10)
    assert response.status_code in (200, 202), response.text
    return stack.client.wait(response.json()["id"], timeout=60)


@pytest.fixture(scope="module")
def engine(stack):
    """The stack's own model, loaded here as the worker loads it."""
    from worker.translation.model.engine import TranslationEngine

    return TranslationEngine(stack.settings)


def test_scores_are_the_decoders_own_per_sentence_and_text(stack, engine):
    texts = ["置信度第一句。置信度第二句！", "置信度第三句"]
    job = post(stack, {"texts": texts, "scores": True})
    assert job["status"] == "succeeded", job
    _, expected = engine.translate(["置信度第一句。", "置信度第二句！", "置信度第三句"], scores=True)
    scores = job["result"]["scores"]
    assert [len(s) for s in scores] == [2, 1]
    assert [s for text in scores for s in text] == pytest.approx(expected, abs=1e-4)
    flat = [s for text in scores for s in text]
    summary = job["confidence"]
    assert summary["threshold"] == stack.settings.low_confidence
    assert summary["mean"] == pytest.approx(sum(flat) / 3) and summary["min"] == pytest.approx(min(flat))
    assert summary["low"] == sum(s < stack.settings.low_confidence for s in flat)


def test_a_job_without_scores_has_the_view_it_always_had(stack):
    job = post(stack, {"texts": ["没有置信度的一句。"]})
    # (every succeeded job has its sentences' fidelity records, issue 36; no scores unless asked for)
    assert set(job) == VIEW_KEYS | {"format", "result", "fidelity"} and set(job["result"]) == {
        "translations",
        "fidelity",
    }
    wrong = requests.post(stack.api.url + "/v1/jobs", json={"texts": ["好。"], "scores": "yes"}, timeout=10)
    assert wrong.status_code == 422 and "scores" in wrong.json()["error"]["message"]


def test_a_cached_sentence_keeps_its_score(stack):
    first = post(stack, {"texts": ["缓存的置信度。"], "scores": True})
    again = post(stack, {"texts": ["缓存的置信度。"], "scores": True})  # all cached: answered by the API
    assert again["cached_sentences"] == 1 and again["result"]["scores"] == first["result"]["scores"]
    assert first["result"]["scores"][0][0] is not None
    mixed = post(stack, {"texts": ["缓存的置信度。一句新的置信度。"], "scores": True})  # the worker fills it
    assert mixed["cached_sentences"] == 1 and mixed["result"]["scores"][0][0] == first["result"]["scores"][0][0]
    translated = requests.post(
        stack.api.url + "/v1/translate", json={"texts": ["缓存的置信度。"], "scores": True}, timeout=30
    ).json()
    assert translated["scores"] == first["result"]["scores"] and translated["confidence"]["low"] == 0


def test_the_summary_counts_the_sentences_under_the_threshold(make_stack, engine):
    texts = ["门槛一。", "门槛第二句话比较长一些。", "门槛三！", "第四个门槛"]
    _, expected = engine.translate(texts, scores=True)
    ordered = sorted(expected)
    threshold = (ordered[1] + ordered[2]) / 2  # between the scores: two under it, two not
    s = make_stack(low_confidence=threshold)
    job = post(s, {"texts": texts, "scores": True})
    assert job["confidence"]["threshold"] == threshold
    assert job["confidence"]["low"] == 2


def test_a_translation_cached_before_scores_were_kept_has_a_null_score(stack):
    """RELIABILITY 106: a cache entry without its score (written before this change) still answers."""
    first = post(stack, {"texts": ["旧的缓存条目。"], "scores": True})
    score_keys = stack.r.keys(f"{stack.settings.key_prefix}c:*:s")
    assert score_keys and all(0 < stack.r.ttl(k) <= stack.settings.cache_ttl for k in score_keys)
    stack.r.delete(*score_keys)
    again = post(stack, {"texts": ["旧的缓存条目。"], "scores": True})
    assert again["cached_sentences"] == 1 and again["result"]["translations"] == first["result"]["translations"]
    assert again["result"]["scores"] == [[None]]
    assert again["confidence"] == {"mean": None, "min": None, "low": 0, "threshold": stack.settings.low_confidence}


def test_a_document_jobs_scores_are_each_documents_sentences_in_order(stack, engine):
    """Scores for documents: a Markdown job through /v1/jobs and an HTML file through /v1/documents, each
    sentence's score in document order (the worker's, then the cache's once every sentence is cached)."""
    markdown = "# 文档置信度标题\n\n文档置信度第一句。文档置信度第二句！\n"
    job = post(stack, {"texts": [markdown, "另一个文档的一句。\n"], "format": "markdown", "scores": True})
    assert job["status"] == "succeeded", job
    _, expected = engine.translate(["文档置信度标题", "文档置信度第一句。", "文档置信度第二句！"], scores=True)
    assert job["result"]["scores"][0] == pytest.approx(expected, abs=1e-3)  # batched with another sentence
    assert len(job["result"]["scores"]) == 2 and len(job["result"]["scores"][1]) == 1
    assert job["confidence"]["mean"] is not None

    page = "<html><body><h1>文档置信度标题</h1></body></html>".encode()
    uploaded = requests.post(
        stack.api.url + "/v1/documents", files={"file": ("t.html", page)}, data={"scores": "true"}, timeout=10
    ).json()
    done = stack.client.wait(uploaded["id"], timeout=60)  # its sentence was cached above: the stage answers it
    assert done["cached_sentences"] == 1 and done["result"]["scores"] == [[job["result"]["scores"][0][0]]]
    plain = requests.post(stack.api.url + "/v1/documents", files={"file": ("t.html", page)}, timeout=10).json()
    assert "scores" not in stack.client.wait(plain["id"], timeout=60)["result"]
    wrong = requests.post(
        stack.api.url + "/v1/documents", files={"file": ("t.html", page)}, data={"scores": "maybe"}, timeout=10
    )
    assert wrong.status_code == 422 and "scores must be true or false" in wrong.json()["error"]["message"]
