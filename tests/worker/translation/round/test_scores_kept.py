"""Each sentence's confidence through a pass (worker.translation.round.batch_plan, recording, job_work): kept with its
translation in the job's progress, so a resumed job keeps the scores it had; a sentence in several pieces gets
their mean. Real Redis and the tiny test model."""

from __future__ import annotations

import pytest

from tests.worker.translation.round.test_batch_runner import BIG_TEXT, LONG_SENTENCE, _active
from tests.worker.translation.worker_jobs import SENTENCES, make_parts, submit
from worker.translation.round.pass_ends import PassEnd


def test_a_resumed_job_keeps_the_scores_of_its_saved_sentences(model_dir, redis_server):
    # (its numbers are not protected here: each sentence's score is compared with the engine's of the sentence)
    parts = make_parts(model_dir, redis_server, max_batch_sentences=2, protect_spans=False)
    job = submit(parts, BIG_TEXT, sentences=8, want_scores=True)
    active = _active(parts, job)
    submit(parts, SENTENCES[0])  # another job waits: the fair slice stops the pass
    assert parts.passes.run(active, fair_slice=1) is PassEnd.FAIR_SLICE
    _, saved = parts.job_claims.partial_progress([job])[0]
    assert saved.keys() == {0, 1}
    resumed = {w.job.id: w for w in parts.loader.load([job])}  # as the next round loads it
    assert resumed[job].scores[:2] == [saved[0], saved[1]] and resumed[job].scores[2:] == [None] * 6
    assert parts.passes.run(resumed) is PassEnd.DONE
    _, expected = parts.engine.translate([f"第{i}句很短。" for i in range(8)], scores=True)
    assert parts.store.get(job).scores == [pytest.approx(expected, abs=1e-4)]


def test_a_sentence_in_pieces_gets_their_mean_and_a_job_without_scores_stores_none(model_dir, redis_server):
    parts = make_parts(model_dir, redis_server, max_input_tokens=4)
    wanted = submit(parts, LONG_SENTENCE, want_scores=True)
    assert parts.passes.run(_active(parts, wanted)) is PassEnd.DONE  # alone: its batch is its pieces
    pieces: list[float] = []  # (a score depends a little on the batch it was decoded in: padding)
    parts.engine.translate_ids(parts.engine.chunks(parts.engine.token_ids([LONG_SENTENCE])[0]), scores=pieces)
    assert len(pieces) > 1
    assert parts.store.get(wanted).scores == [[pytest.approx(sum(pieces) / len(pieces), abs=1e-4)]]
    plain = submit(parts, "不要分数。")
    assert parts.passes.run(_active(parts, plain)) is PassEnd.DONE
    keys = parts.backends.keys
    assert parts.store.get(plain).scores is None and not parts.backends.redis.hexists(keys.job(plain), "scores")
