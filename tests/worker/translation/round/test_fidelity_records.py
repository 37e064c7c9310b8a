"""Each sentence's fidelity record through a pass (worker.translation.round.recording, quality_gate, job_work): kept
with its translation in the job's progress (`partial:<id>` fields f<index>), so a resumed job keeps the records it
had; a lost placeholder's spans counted as repaired; the quality gate's retry, flag and withholding. Real Redis
and the tiny copy model."""

from __future__ import annotations

from shared.store.job_claims import Progress
from tests.worker.translation.round.test_batch_runner import _active
from tests.worker.translation.worker_jobs import SENTENCES, make_parts, submit
from worker.translation.round.pass_ends import PassEnd

SPANS = "".join(f"第{i}章在2026-01-0{i + 1}发布。" for i in range(6))  # six sentences, two spans each
STRICT = -1e-9  # above any score the copy model gives


def test_a_resumed_job_keeps_the_records_of_its_saved_sentences(model_dir, redis_server):
    parts = make_parts(model_dir, redis_server, max_new_tokens=32)
    job = submit(parts, SPANS, sentences=6)
    (work,) = _active(parts, job).values()
    saved = {0: {"kept": 2, "repaired": 2}, 1: {"kept": 2, "flags": ["untranslated"]}}
    progress = Progress(2, 0, {0: "Chapter 0", 1: "Chapter 1"}, None, None, saved)  # as a parked pass saved it
    assert parts.job_claims.once.set_progress(job, work.fence, progress) == "ok"
    assert parts.job_claims.once.partial_fidelity([job]) == [saved]
    assert parts.job_claims.once.partial_progress([job]) == [({0: "Chapter 0", 1: "Chapter 1"}, {})]
    resumed = {w.job.id: w for w in parts.loader.load([job])}  # as the next round loads it
    assert resumed[job].fidelity[:2] == [saved[0], saved[1]] and resumed[job].fidelity[2:] == [None] * 4
    assert parts.passes.run(resumed) is PassEnd.DONE
    (records,) = parts.store.get(job).fidelity
    assert records[:2] == [saved[0], saved[1]]
    assert all(r["kept"] == 2 and "untranslated" in r["flags"] for r in records[2:])  # the copy model copies Han
    counters, _ = parts.backends.stats.read()
    assert counters["fidelity_sentences"] == 4 and counters["fidelity_spans_kept"] == 8


def test_lost_placeholders_are_repaired_and_counted(model_dir, redis_server, monkeypatch):
    parts = make_parts(model_dir, redis_server, max_new_tokens=32)
    translate_ids = parts.engine.translate_ids

    def dropping(batch, *args, **kwargs):  # type: ignore[no-untyped-def]
        return [text.replace("__", "") for text in translate_ids(batch, *args, **kwargs)]

    monkeypatch.setattr(parts.engine, "translate_ids", dropping)
    job = submit(parts, "价格是12.5元，见https://example.com/p。")
    assert parts.passes.run(_active(parts, job)) is PassEnd.DONE
    stored = parts.store.get(job)
    assert "12.5" in stored.result[0] and "https://example.com/p" in stored.result[0]
    assert stored.fidelity == [[{"kept": 2, "repaired": 2, "flags": ["untranslated"]}]]


def test_the_gate_retries_at_a_wider_beam_then_flags_or_withholds(model_dir, redis_server, monkeypatch):
    parts = make_parts(model_dir, redis_server, max_new_tokens=32)
    beams: list[int | None] = []
    translate_ids = parts.engine.translate_ids

    def counting(batch, *args, num_beams=None, **kwargs):  # type: ignore[no-untyped-def]
        beams.append(num_beams)
        return translate_ids(batch, *args, num_beams=num_beams, **kwargs)

    monkeypatch.setattr(parts.engine, "translate_ids", counting)
    flagged = submit(parts, SENTENCES[0], min_confidence=STRICT)
    withheld = submit(parts, SENTENCES[1], min_confidence=STRICT, withhold=True)
    passed = submit(parts, SENTENCES[2], min_confidence=-5.0)
    assert parts.passes.run(_active(parts, flagged, withheld, passed)) is PassEnd.DONE
    assert beams.count(4) == 1  # one retry batch, at max(4, 2 x 1) beams, for the two sentences under their gate
    one, two, three = (parts.store.get(j) for j in (flagged, withheld, passed))
    assert one.fidelity[0][0]["retried"] == ["low_confidence"] and "low_confidence" in one.fidelity[0][0]["flags"]
    assert two.result == [SENTENCES[1]] and two.fidelity[0][0]["withheld"] is True
    assert "retried" not in three.fidelity[0][0] and "low_confidence" not in three.fidelity[0][0].get("flags", [])
    cache = parts.backends.cache  # only what passed its gate is cached
    assert cache.get_many(parts.namespace, SENTENCES[:3]) == [None, None, three.result[0]]
    counters, _ = parts.backends.stats.read()
    assert (counters["gate_retried"], counters["gate_low_confidence"], counters["gate_withheld"]) == (2, 2, 1)


def test_the_gates_retry_fits_its_wider_batches_to_free_memory(model_dir, redis_server, tmp_path):
    """The retry's batches are split to fit in free memory as a pass's are, estimated at the wider beam: in a
    (fake cgroup v2) container with room for the first translation at beam 1 but not for the same sentence at
    beam 4, the job keeps its first translation, flagged, instead of the retry allocating past the limit."""
    probe = make_parts(model_dir, redis_server, max_new_tokens=32)
    longest = len(probe.engine.token_ids([SENTENCES[0]])[0]) + 1
    at_one, at_four = probe.engine.estimate_batch_bytes(1, longest), probe.engine.estimate_batch_bytes(1, longest, 4)
    assert at_four > at_one
    headroom = 2**20
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    (cgroup / "memory.max").write_text(str(10 * 2**30))
    # free memory: between the two estimates (and the headroom), so only the wider beam does not fit
    (cgroup / "memory.current").write_text(str(10 * 2**30 - headroom - (at_one + at_four) // 2))
    (cgroup / "memory.stat").write_text("inactive_file 0\n")
    parts = make_parts(
        model_dir, redis_server, max_new_tokens=32, cgroup_root=str(cgroup), memory_headroom_mb=1
    )
    beams: list[int | None] = []
    translate_ids = parts.engine.translate_ids

    def counting(batch, *args, num_beams=None, **kwargs):  # type: ignore[no-untyped-def]
        beams.append(num_beams)
        return translate_ids(batch, *args, num_beams=num_beams, **kwargs)

    parts.engine.translate_ids = counting  # type: ignore[method-assign]
    flagged = submit(parts, SENTENCES[0], min_confidence=STRICT)
    assert parts.passes.run(_active(parts, flagged)) is PassEnd.DONE
    assert 4 not in beams and beams  # translated once at beam 1, never again at beam 4
    job = parts.store.get(flagged)
    assert job.status == "succeeded" and job.result and "low_confidence" in job.fidelity[0][0]["flags"]
    assert "retried" not in job.fidelity[0][0] or job.fidelity[0][0]["retried"] == []
