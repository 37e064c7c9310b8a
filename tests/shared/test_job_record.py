"""The job record's codec (shared.store.record_codec): the hash's fields come from Job's fields, both ways,
under the names stored since the first release (the scripts and existing records read them)."""

import dataclasses

from shared.store.callback_state import Delivery, DeliveryState
from shared.store.job_record import JOB_HASH, DocumentRecord, Job
from shared.store.job_status import JobStatus

STORED_NAMES = (
    "id status texts model created_at sentences_total sentences_done cached_sentences started_at finished_at "
    "result error attempts submitted owner route format warnings callback_url detected glossary want_scores scores "
    "min_confidence withhold fidelity document filename spans memory from_memory suggestions callback_state callback_attempts callback_last_status callback_last_error"
).split()


def full_job() -> Job:
    return Job(
        id="a" * 32,
        status=JobStatus.SUCCEEDED,
        texts=["你好。"],
        model="m",
        created_at="2026-01-02T03:04:05.678901Z",
        sentences_total=2,
        sentences_done=2,
        cached_sentences=1,
        started_at="s",
        finished_at="f",
        result=["Hello."],
        error={"code": "timeout", "message": "é"},
        attempts=2,
        submitted=1767323045.25,
        owner="key:0123",
        route="zh-en-0123",
        format="markdown",
        warnings=[{"sentence": 0, "kind": "repeats"}],
        callback_url="https://hooks.example.com/x",
        detected={"language": "zh", "confidence": 0.75},
        glossary={"你好": "Hi"},
        want_scores=True,
        scores=[[-0.5, None]],
        min_confidence=-1.5,
        withhold=True,
        fidelity=[[{"kept": 2, "repaired": 1}, {"flags": ["untranslated"], "withheld": True}]],
        document=DocumentRecord('{"format": "markdown"}', "a.md"),
        spans=[[0, 3, 1]],
        memory={"owner": "key:0123", "ids": ["b" * 32], "threshold": 75, "pair": "zh-en", "hits": {"0": "Hi."}},
        from_memory=1,
        suggestions=[{"sentence": 1, "matches": [{"source": "你好吗。", "target": "Hi?", "score": 80.0}]}],
    )


def test_the_hash_names_are_the_stored_ones():
    assert sorted(JOB_HASH.names) == sorted(STORED_NAMES)


def test_a_job_is_written_and_read_back_whole():
    job = full_job()
    written = job.to_hash()
    assert set(written) == set(STORED_NAMES) - {
        n for n in STORED_NAMES if n.startswith("callback_") and n != "callback_url"
    }
    assert (
        written["status"] == "succeeded" and written["want_scores"] == "1" and written["submitted"] == "1767323045.25"
    )
    assert (written["document"], written["filename"]) == ('{"format": "markdown"}', "a.md")
    assert written["texts"] == '["你好。"]' and written["sentences_total"] == "2" and written["spans"] == "[[0, 3, 1]]"
    assert Job.from_hash(written) == job


def test_empty_values_are_not_written_and_read_as_their_defaults():
    job = Job(id="b" * 32, status=JobStatus.QUEUED, texts=[], model="m", created_at="", sentences_total=1)
    written = job.to_hash()
    assert set(written) == {
        "id", "status", "texts", "model", "created_at", "sentences_total", "sentences_done", "cached_sentences",
        "attempts", "submitted", "owner", "route", "format",
    }  # fmt: skip
    read = Job.from_hash({"id": job.id, "status": "queued"})
    assert read == dataclasses.replace(job, created_at="", model="", sentences_total=0, submitted=0.0)
    assert read.document is None and read.callback is None and read.scores is None and read.warnings == []


def test_a_callback_s_delivery_is_read_with_the_record_and_never_written_by_it():
    job = dataclasses.replace(full_job(), delivery=Delivery(DeliveryState.FAILED, 3, 500, "boom"))
    assert not any(name.startswith("callback_") and name != "callback_url" for name in job.to_hash())
    settled = {"callback_state": "delivered", "callback_attempts": "2", "callback_last_status": "200"}
    read = Job.from_hash({**job.to_hash(), **settled, "callback_last_error": ""})
    assert read.callback == Delivery(DeliveryState.DELIVERED, 2, 200, None)
    assert Job.from_hash(job.to_hash()).callback == Delivery()  # final, not yet taken: pending
    assert Job.from_hash({**dataclasses.replace(job, callback_url="").to_hash(), **settled}).callback is None


def test_a_partial_write_encodes_as_the_whole_record_does():
    assert JOB_HASH.encode_values(result=["Hallo"], warnings=[], scores=None, sentences_done=3) == {
        "result": '["Hallo"]',
        "sentences_done": "3",
    }
    assert JOB_HASH.encode_values(document=DocumentRecord("{}")) == {"document": "{}"}
