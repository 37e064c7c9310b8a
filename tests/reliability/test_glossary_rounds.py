"""The sentences a glossary's term matches go through a round's slices, batches, memory fit and progress like
every other sentence (worker.translation.round.batch_plan, shared.text.term_protection.TermProtection): a big job
of them is parked at its time slice and resumed instead of failing `timeout` with nothing done, another client's
one-sentence job passes it within a fair slice, and a round of only glossary sentences logs no error. Real Redis,
gunicorn and one Celery worker with the tiny test model."""

from __future__ import annotations

import time

import pytest

from tests.conftest import Stack

pytestmark = pytest.mark.slow

SOFT_LIMIT = 6  # the task's soft time limit: a round parks its jobs after 3 s
BIG = 1500  # sentences of the big job: 375 batches; the base commit's one glossary call of them took 10-25 s here
GLOSSARY = {"北京": "Beijing"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory, model_dir):
    s = Stack(
        tmp_path_factory.mktemp("glossary-rounds"),
        model_dir,
        task_soft_time_limit=SOFT_LIMIT,
        task_time_limit=SOFT_LIMIT + 10,
        visibility_timeout=SOFT_LIMIT + 40,
        # Steady batches on a loaded machine (one thread), each of 64 decoding steps and 8 sentences at most
        # (the tiny model's 64 tokens repeat the placeholder: sentences take both of term protection's stages).
        torch_threads=1,
        max_new_tokens=64,
        min_new_tokens=64,
        max_batch_sentences=8,
    )
    try:
        yield s.start()
    finally:
        s.close()


def _big_texts() -> list[str]:
    sentences = [f"第{i}号文件在北京。" for i in range(BIG)]
    return ["".join(sentences[i : i + 100]) for i in range(0, BIG, 100)]


def test_a_big_glossary_job_is_sliced_and_a_small_job_passes_it(stack):
    big = stack.client.submit(_big_texts(), glossary=GLOSSARY)["id"]
    deadline = time.monotonic() + 30
    while stack.client.job(big)["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)  # well into its round
    submitted = time.monotonic()
    small = stack.client.submit(["小工作。"], glossary={"工作": "work"})["id"]
    done = stack.client.wait(small, timeout=60, interval=0.05)
    waited = time.monotonic() - submitted
    during = stack.client.job(big)
    print(f"the one-sentence job waited {waited:.2f} s; the big job was {during['status']}: {during.get('error')}")
    assert done["status"] == "succeeded" and "work" in done["result"]["translations"][0]
    # The base commit: it waited for the big job's whole glossary call (here, until that failed `timeout`).
    assert during["status"] == "running", f"the small job waited for the big one: {during['status']}"
    assert waited < 5.0, f"the one-sentence job took {waited:.1f} s"

    seen = {during["progress"]["sentences_done"]}
    final = stack.client.wait(
        big, timeout=240, interval=0.2, on_progress=lambda j: seen.add(j["progress"]["sentences_done"])
    )
    assert final["status"] == "succeeded", final.get("error")
    assert len([n for n in seen if 0 < n < BIG]) >= 3, f"no progress seen along the way: {sorted(seen)}"
    assert all(text.count("Beijing") >= 100 for text in final["result"]["translations"])
    assert stack.r.hget(f"transq:job:{big}", "attempts") == "1"  # parked and resumed, never lost
    assert "half its time limit: giving its jobs back" in stack.workers[0].log_path.read_text(encoding="utf-8")


def test_rounds_of_glossary_sentences_log_no_error(stack):
    log = stack.workers[0].log_path
    assert log is not None
    start = log.stat().st_size
    only_terms = stack.client.submit(["北京。", "北京！"], glossary=GLOSSARY)["id"]
    all_matched = stack.client.submit(["今天北京的天气很好。明天北京下雨。"], glossary=GLOSSARY)["id"]
    none_matched = stack.client.submit(["没有术语。"], glossary={"上海": "Shanghai"})["id"]
    results = {job: stack.client.wait(job, timeout=60) for job in (only_terms, all_matched, none_matched)}
    assert all(r["status"] == "succeeded" for r in results.values()), results
    assert results[only_terms]["result"]["translations"] == ["Beijing。", "Beijing！"]  # no model needed
    assert results[all_matched]["result"]["translations"][0].count("Beijing") >= 2
    again = stack.client.submit(["今天北京的天气很好。明天北京下雨。"], glossary=GLOSSARY)  # all cached
    assert again["status"] == "succeeded" and again["cached_sentences"] == 2
    time.sleep(0.5)  # the rounds' last lines
    with log.open(encoding="utf-8", errors="replace") as lines:
        lines.seek(start)
        written = lines.read()
    assert "ERROR" not in written and "Traceback" not in written, written[-3000:]
