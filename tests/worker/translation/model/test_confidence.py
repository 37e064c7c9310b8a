"""Each translation's confidence, on request: generate()'s beam score (`sequences_scores`) at beam search,
the mean log-probability of the chosen tokens at greedy, from our loop and from the generate() fallback."""

from __future__ import annotations

import pytest
import torch

from tests.worker.translation.model.test_decoding import SENTENCES, output_tokens


@pytest.mark.parametrize("beams", [1, 4])
def test_confidence_is_generates_score(eos_prone, engine, beams):
    from worker.translation.model.decoding import Decoder

    decoder = Decoder.for_model(eos_prone)
    eos, pad = engine.tokenizer.eos_token_id, engine.tokenizer.pad_token_id
    input_ids, mask = engine.batch_inputs(engine.token_ids(SENTENCES))
    confidence: list[float] = []
    with torch.inference_mode():
        ours = decoder.generate(eos_prone, input_ids, mask, beams, 12, confidence=confidence)
        reference = eos_prone.generate(
            input_ids=input_ids,
            attention_mask=mask,
            num_beams=beams,
            max_new_tokens=12,
            output_scores=True,
            return_dict_in_generate=True,
        )
    assert ours == output_tokens(reference.sequences, eos, pad)
    if beams > 1:
        expected = reference.sequences_scores.tolist()
    else:  # each chosen token's log-probability under the scores generate() reports, averaged
        log_probs = torch.stack(reference.scores, dim=1).log_softmax(-1)
        expected = [
            sum(float(log_probs[row, i, token]) for i, token in enumerate(tokens)) / len(tokens)
            for row, tokens in enumerate(ours)
        ]
    assert confidence == pytest.approx(expected, abs=1e-4)
    assert len({len(t) for t in ours}) > 1 and len({round(c, 3) for c in confidence}) > 1
    assert all(c < 0 for c in confidence)


@pytest.mark.parametrize("beams", [1, 4])
def test_engine_translates_with_scores_and_the_fallback_agrees(engine, beams):
    engine.num_beams = beams
    try:
        plain = engine.translate(SENTENCES)
        texts, scores = engine.translate(SENTENCES, scores=True)
        decoder, engine.decoder = engine.decoder, None  # generate(), as for a config our loop does not serve
        try:
            fallback_texts, fallback_scores = engine.translate(SENTENCES, scores=True)
        finally:
            engine.decoder = decoder
    finally:
        engine.num_beams = 1
    assert texts == plain == fallback_texts
    assert len(scores) == len(SENTENCES) and all(s <= 0 for s in scores)
    assert scores == pytest.approx(fallback_scores, abs=1e-4)
