"""The degenerate-output guard's retry runs batched through the engine's own loop (n-gram blocking and
each piece's length cap in the loop) and gives what generate() gave one sentence at a time."""

from __future__ import annotations

import pytest
import torch

from shared.settings import Settings
from tests.worker.translation.model.test_decoding import SENTENCES
from worker.translation.model import guarded_retry
from worker.translation.model.guarded_retry import translate_guarded
from worker.translation.model.output_guard import guard, problem


@pytest.fixture(scope="module")
def looping_engine(tmp_path_factory):
    """The untrained test model (its outputs loop, in source pieces too), fp32 and its whole output layer so
    that batching changes no number and generate() is comparable."""
    from worker.translation.model.engine import TranslationEngine
    from worker.translation.model.offline_model import make_test_model

    folder = make_test_model(tmp_path_factory.mktemp("looping") / "tiny", behaviour="random")
    return TranslationEngine(Settings(model=str(folder), max_new_tokens=40, quantize="none", target_vocabulary=False))


def _one_at_a_time(engine, sentence: str) -> str:  # type: ignore[no-untyped-def]
    """The retry as it was: each piece alone through generate(), phrases of 3 tokens once, capped."""
    out = []
    for chunk in engine.chunks(engine.token_ids([sentence])[0]):
        input_ids, attention = engine.batch_inputs([chunk])
        with torch.inference_mode():
            output = engine.model.generate(
                input_ids=input_ids,
                attention_mask=attention,
                num_beams=engine.num_beams,
                max_new_tokens=min(engine.max_new_tokens, 2 * len(chunk) + 8),
                no_repeat_ngram_size=3,
                do_sample=False,
            )
        out.append(engine.tokenizer.decode(output[0], skip_special_tokens=True, clean_up_tokenization_spaces=True))
    return " ".join(" ".join(out).split())


@pytest.mark.parametrize("beams", [1, 4])
def test_the_retry_is_one_batch_through_the_engine_with_generates_output(looping_engine, beams):
    engine = looping_engine
    engine.num_beams = beams
    assert engine.decoder is not None
    looped = engine.translate_ids(engine.token_ids(SENTENCES))
    assert any(problem(s, t) for s, t in zip(SENTENCES, looped))  # the model does loop
    rows: list[int] = []
    first_layer = engine.model.get_decoder().layers[0]  # its query: the rows of each decoder step
    handle = first_layer.self_attn.q_proj.register_forward_pre_hook(lambda _m, args: rows.append(args[0].shape[0]))
    try:
        again = translate_guarded(engine, SENTENCES)
    finally:
        handle.remove()
        engine.num_beams = 1
    engine.num_beams = beams
    try:
        assert again == [_one_at_a_time(engine, s) for s in SENTENCES]
    finally:
        engine.num_beams = 1
    assert rows[0] == len(SENTENCES) * beams  # all sentences in one batch, not one by one
    # n-gram blocking changed the loops (the stricter guard may still read some random-weight outputs as
    # loops by their characters: those are flagged and not cached, as RELIABILITY 50 says)
    assert again != looped


def test_guard_retries_every_degenerate_translation_in_one_call(looping_engine, monkeypatch):
    engine = looping_engine
    finished = dict(zip(SENTENCES, engine.translate_ids(engine.token_ids(SENTENCES))))
    degenerate = {s for s, t in finished.items() if problem(s, t)}
    calls: list[list[str]] = []

    def counted(engine, sentences):  # type: ignore[no-untyped-def]
        calls.append(list(sentences))
        return translate_guarded(engine, sentences)

    monkeypatch.setattr(guarded_retry, "translate_guarded", counted)
    warnings, _ = guard(engine, finished)
    assert calls == [sorted(degenerate, key=SENTENCES.index)]
    assert set(warnings) == degenerate
