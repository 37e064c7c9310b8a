"""Fidelity checks and the quality gate end to end (issue 36, parts 1 and 2), through a real stack: gunicorn, Redis,
the document stage and a Celery worker with the shipped copy model (its outputs copy its input, at a confidence
near 0), so a protected span that comes back, and Chinese left in an English translation, both show."""

import math

import pytest
import requests

from tests.api.test_openapi import conforms
from tests.conftest import Stack

pytestmark = pytest.mark.slow

SPANS = "Version 2.1 ships on 2026-01-02, see https://example.com/dl for $10."
CHINESE = "我有3个苹果。"
STRICT = -1e-9  # above any score the copy model gives (about -0.003): every sentence is under it


@pytest.fixture(scope="module")
def stack(tmp_path_factory, model_dir):
    """A stack whose worker writes whole sentences (the shared one stops at 8 tokens)."""
    s = Stack(tmp_path_factory.mktemp("fidelity-stack"), model_dir, max_new_tokens=64)
    try:
        yield s.start()
    finally:
        s.close()


def post(stack, body, path="/v1/jobs"):
    response = requests.post(stack.api.url + path, json=body, timeout=30)
    assert response.status_code in (200, 202), response.text
    job = response.json()
    if job.get("status") == "succeeded":
        return requests.get(f"{stack.api.url}/v1/jobs/{job['id']}", timeout=10).json()
    return stack.wait_status(job["id"], ("succeeded", "failed"))


def counters(stack) -> dict[str, float]:
    found = {}
    for line in requests.get(stack.api.url + "/metrics", timeout=10).text.splitlines():
        if line.startswith(("transq_fidelity", "transq_gate")):
            name, value = line.rsplit(" ", 1)
            found[name] = float(value)
    return found


def test_spans_come_back_and_each_sentence_reports_what_was_kept_and_flagged(stack):
    job = post(stack, {"texts": [SPANS, CHINESE]})
    assert job["status"] == "succeeded", job
    assert job["result"]["translations"][0] == SPANS  # the copy model copies; its spans came back exactly
    records = job["result"]["fidelity"]
    # all four spans there; the copy model may lose placeholders in a long sentence: then they were repaired
    (first,) = records[0]
    assert first["kept"] == 4 and "flags" not in first and first.get("repaired", 0) in (0, 4)
    assert records[1] == [{"kept": 1, "flags": ["untranslated"]}]  # Han characters in the English
    repaired = first.get("repaired", 0)
    assert job["fidelity"] == {
        "sentences": 2,
        "kept": 5,
        "repaired": repaired,
        "flagged": 1,
        "flags": {"untranslated": 1},
    }
    assert "quality_gate" not in job  # no gate asked for, none by default
    seen = counters(stack)
    assert (
        seen['transq_fidelity_flags_total{flag="untranslated"}'] >= 1 and seen["transq_fidelity_spans_kept_total"] >= 5
    )
    again = post(stack, {"texts": [SPANS, CHINESE]})  # all cached: the API checks the cached answer the same way
    unrepaired = [[{k: v for k, v in r.items() if k != "repaired"} for r in text] for text in records]
    assert again["cached_sentences"] == 2 and again["result"]["fidelity"] == unrepaired  # (how is not cached)


def test_a_sentence_under_the_gate_is_retried_then_flagged_or_withheld(stack):
    flagged = post(stack, {"texts": ["质量门槛第一句。"], "min_confidence": STRICT, "scores": True})
    record = flagged["result"]["fidelity"][0][0]
    assert record["retried"] == ["low_confidence"] and "low_confidence" in record["flags"]
    assert flagged["result"]["scores"][0][0] < STRICT  # the better of its two translations' scores, still under
    assert flagged["quality_gate"] == {"min_confidence": STRICT, "retried": 1, "low_confidence": 1, "withheld": 0}
    spec = requests.get(stack.api.url + "/openapi.json", timeout=10).json()
    conforms(spec, "JobView", flagged)  # the contract's models drive /openapi.json
    withheld = post(stack, {"texts": ["质量门槛第二句。"], "min_confidence": STRICT, "on_low_confidence": "withhold"})
    assert withheld["result"]["fidelity"][0][0]["withheld"] is True
    assert withheld["quality_gate"]["withheld"] == 1
    passed = post(stack, {"texts": ["质量门槛第三句。"], "min_confidence": -1.0, "scores": True})
    assert passed["quality_gate"] == {"min_confidence": -1.0, "retried": 0, "low_confidence": 0, "withheld": 0}
    assert passed["result"]["scores"][0][0] > -1.0
    seen = counters(stack)
    assert seen["transq_gate_retried_total"] >= 2 and seen["transq_gate_withheld_total"] >= 1


def test_a_cached_answer_does_not_bypass_a_stricter_gate(stack):
    first = post(stack, {"texts": ["缓存与门槛。"], "scores": True})  # cached with its score
    assert first["cached_sentences"] == 0
    lenient = post(stack, {"texts": ["缓存与门槛。"], "min_confidence": -1.0})  # its cached score passes: cached
    assert lenient["cached_sentences"] == 1 and lenient["quality_gate"]["retried"] == 0
    strict = post(stack, {"texts": ["缓存与门槛。"], "min_confidence": STRICT})  # under it: translated and gated
    assert strict["cached_sentences"] == 0 and strict["quality_gate"]["retried"] == 1
    assert strict["quality_gate"]["low_confidence"] == 1


def test_the_server_default_gate_applies_to_a_job_that_sets_none(make_stack):
    s = make_stack(max_new_tokens=64, min_confidence=-1e-9)
    job = post(s, {"texts": ["默认门槛。"]})
    assert job["quality_gate"]["min_confidence"] == -1e-9 and job["quality_gate"]["low_confidence"] == 1
    own = post(s, {"texts": ["自己的门槛。"], "min_confidence": -1.0})
    assert own["quality_gate"]["low_confidence"] == 0


@pytest.mark.parametrize(
    "fields",
    [
        {"min_confidence": 2},
        {"min_confidence": 0.5},
        {"min_confidence": -101},
        {"min_confidence": "x"},
        {"min_confidence": "-0.5"},  # a JSON body's number is a number
        {"min_confidence": True},
        {"min_confidence": [1]},
        {"on_low_confidence": "drop"},
        {"on_low_confidence": 5},
        {"on_low_confidence": None},
    ],
)
def test_odd_gate_fields_are_refused_with_a_json_error_and_nothing_stored(stack, fields):
    before = len(stack.r.keys(f"{stack.settings.key_prefix}job:*"))
    for path in ("/v1/jobs", "/v1/translate"):
        response = requests.post(stack.api.url + path, json={"texts": ["好。"], **fields}, timeout=10)
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "validation_error" and next(iter(fields)) in error["message"]
    assert len(stack.r.keys(f"{stack.settings.key_prefix}job:*")) == before


def test_nan_and_infinity_are_refused(stack):
    for raw in ("NaN", "Infinity", "-Infinity", "1e999", "-1e999"):
        body = '{"texts": ["好。"], "min_confidence": ' + raw + "}"
        response = requests.post(
            stack.api.url + "/v1/jobs", data=body, headers={"Content-Type": "application/json"}, timeout=10
        )
        assert response.status_code in (400, 422) and response.json()["error"]["message"]
    assert not math.isnan(-1.0)  # (-1 itself is a valid gate: scores are log-probabilities, 0 best)
    assert post(stack, {"texts": ["负一。"], "min_confidence": -1})["quality_gate"]["min_confidence"] == -1.0


def test_a_document_carries_its_sentences_records_and_its_gate(stack):
    files = {"file": ("page.html", b"<p>Costs $10 on 2026-01-02.</p><p>\xe4\xbd\xa0\xe5\xa5\xbd\xe3\x80\x82</p>")}
    data = {"min_confidence": str(STRICT), "on_low_confidence": "flag"}
    response = requests.post(stack.api.url + "/v1/documents", files=files, data=data, timeout=30)
    assert response.status_code in (200, 202), response.text
    job = stack.wait_status(response.json()["id"], ("succeeded", "failed"))
    assert job["status"] == "succeeded", job
    (records,) = job["result"]["fidelity"]  # one document: its sentences in order
    assert records[0]["kept"] == 2 and "untranslated" in records[1]["flags"]
    assert job["quality_gate"]["low_confidence"] == 2
    bad = requests.post(stack.api.url + "/v1/documents", files=files, data={"min_confidence": "x"}, timeout=30)
    assert bad.status_code == 422 and "min_confidence" in bad.json()["error"]["message"]
