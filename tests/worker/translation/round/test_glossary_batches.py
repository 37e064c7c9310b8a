"""A glossary's sentences in a pass (worker.translation.round.batch_plan, shared.text.term_protection.TermProtection):
pieces of the plan next to every other sentence, their second stage as follow-up batches that run before a slice
ends, recorded, cached under the glossary's namespace, never a model or tokenizer call with nothing to translate.
Real Redis and the tiny test model."""

from __future__ import annotations

import pytest

from shared.store.sentence_cache import glossary_namespace
from shared.text.glossary import Glossary
from tests.worker.translation.round.test_batch_runner import _active
from tests.worker.translation.worker_jobs import SENTENCES, make_parts, submit
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.pass_ends import PassEnd

TERMS = {"北京": "Beijing"}
SENTENCE = "今天北京的天气很好。"


@pytest.fixture
def small_batches(model_dir, redis_server):
    # (its sentences' numbers are not protected spans here: they would add pieces between the terms)
    return make_parts(model_dir, redis_server, max_batch_sentences=2, protect_spans=False)


def _dropping_placeholders(monkeypatch, engine):  # type: ignore[no-untyped-def]
    """The engine, losing every placeholder on the way (as a real model may): each sentence takes both stages."""
    translate_ids, batches = engine.translate_ids, []

    def dropping(batch, **options):  # type: ignore[no-untyped-def]
        batches.append(len(batch))
        return [text.replace("__1__", "") for text in translate_ids(batch, **options)]

    monkeypatch.setattr(engine, "translate_ids", dropping)
    return batches


def test_glossary_sentences_are_pieces_of_the_plan_beside_the_plain_ones(parts):
    glossary_job = submit(parts, SENTENCE + "北京。" + SENTENCES[1], sentences=3, glossary=TERMS, want_scores=True)
    plain_job = submit(parts, SENTENCE)
    active = _active(parts, glossary_job, plain_job)
    plan = BatchPlan.make(parts.engine, active, first=frozenset())
    digest = Glossary.of(TERMS).digest
    # One sentence plainly for one job and through the glossary for the other: two entries; one of terms only
    # is translated without the model; one no term matches is the plain job's entry's kind.
    assert sorted((e.sentence, e.glossary) for e in plan.entries) == sorted(
        [(SENTENCE, digest), ("北京。", digest), (SENTENCES[1], ""), (SENTENCE, "")]
    )
    assert [(plan.entries[e].sentence, t) for e, t in plan.ready.items()] == [("北京。", "Beijing。")]
    protected = next(p for p in plan.pieces if plan.entries[p.entry].glossary)
    assert protected.ids == parts.engine.token_ids(["今天__1__的天气很好。"])[0]
    assert sorted(u for b in plan.batches for u in b) == list(range(len(plan.pieces))) and len(plan.batches) == 1

    assert parts.passes.run(active) is PassEnd.DONE and active == {}
    result = parts.store.get(glossary_job)
    assert result.result[0].count("Beijing") == 2 and "北京" not in result.result[0]
    # A sentence through term protection has its placeholder form's score (the quality gate judges it); one of
    # terms only has none: no model ran.
    assert result.scores[0][0] is not None and result.scores[0][1] is None and result.scores[0][2] is not None
    cached = parts.backends.cache.get_many(glossary_namespace(parts.namespace, digest), [SENTENCE, "北京。"])
    assert cached[1] == "Beijing。" and "Beijing" in str(cached[0])
    assert parts.backends.cache.get_many(parts.namespace, [SENTENCE]) == parts.store.get(plain_job).result
    counters, _ = parts.backends.stats.read()
    assert counters["sentences_translated"] == 4


def test_a_lost_placeholder_is_a_follow_up_batch_that_runs_next(parts, monkeypatch):
    _dropping_placeholders(monkeypatch, parts.engine)
    job = submit(parts, "我在北京。" + SENTENCES[2], sentences=2, glossary=TERMS)
    plan = BatchPlan.make(parts.engine, _active(parts, job), first=frozenset())
    batch, follow_up = plan.next_batch()
    assert not follow_up and not plan.batches
    plan.keep(batch, parts.engine.translate_ids(plan.ids(batch)))
    done, _ = plan.finish(batch)
    assert [plan.entries[e].sentence for e in done] == [SENTENCES[2]]  # the plain one; the other needs its pieces
    assert plan.follow_ups == len(plan.batches) == 1
    follow_up_batch, follow_up = plan.next_batch()
    assert follow_up and plan.texts(follow_up_batch) == ["我在北京。"]
    assert plan.ids(follow_up_batch) == parts.engine.token_ids(["我在"])  # the piece between the terms ("。" is kept)
    plan.keep(follow_up_batch, ["I am in"])
    assert plan.finish(follow_up_batch)[0] == {next(iter(set(range(2)) - set(done))): "I am in Beijing。"}


def test_a_slice_ends_after_the_follow_ups_and_the_parked_job_keeps_what_it_translated(small_batches, monkeypatch):
    parts = small_batches
    batches = _dropping_placeholders(monkeypatch, parts.engine)
    job = submit(parts, "".join(f"第{i}句在北京。" for i in range(6)), sentences=6, glossary=TERMS)
    active = _active(parts, job)
    submit(parts, SENTENCES[0])  # another job waits: the fair slice ends the pass after one batch
    assert parts.passes.run(active, fair_slice=1) is PassEnd.FAIR_SLICE
    assert batches == [2, 2]  # the placeholders of two sentences, then their pieces between the terms
    assert active[job].done == 2 and parts.job_claims.once.partial_translations([job])[0].keys() == {0, 1}
    resumed = {w.job.id: w for w in parts.loader.load([job])}  # as the next round loads it
    assert parts.passes.run(resumed) is PassEnd.DONE
    assert parts.store.get(job).result[0].count("Beijing") == 6
    counters, _ = parts.backends.stats.read()
    assert counters["sentences_translated"] == 6  # nothing translated twice


def test_a_pass_of_sentences_of_terms_only_calls_no_model_or_tokenizer(parts, monkeypatch):
    job = submit(parts, "北京。", glossary=TERMS)
    active = _active(parts, job)

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the model or its tokenizer was called")

    monkeypatch.setattr(parts.engine, "token_ids", refuse)
    monkeypatch.setattr(parts.engine, "translate_ids", refuse)
    assert parts.passes.run(active) is PassEnd.DONE and active == {}
    assert parts.store.get(job).result == ["Beijing。"]


def test_a_batch_holds_no_more_glossary_sentences_than_their_follow_ups_may_need(model_dir, redis_server):
    # Two sentences a batch (a batch's follow-ups hold at most 4 x 2 pieces), each sentence in one piece.
    parts = make_parts(model_dir, redis_server, max_batch_sentences=2, max_input_tokens=64)
    terms = {"甲": "A", "乙": "B", "丙": "C", "丁": "D", "戊": "E"}
    dense = "".join(f"第{i}句甲一乙二丙三丁四戊五。" for i in range(2))  # five terms: up to six pieces between
    job = submit(parts, dense + "第三句。第四句。", sentences=4, glossary=terms)
    plan = BatchPlan.make(parts.engine, _active(parts, job), first=frozenset())
    kinds = sorted([bool(plan.entries[plan.pieces[u].entry].glossary) for u in batch] for batch in plan.batches)
    assert kinds == [[False, False], [True], [True]]  # the plain ones share a batch, the dense ones do not
