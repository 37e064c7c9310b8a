"""transq's decoding loop gives exactly the tokens of transformers' generate(), and hands configs it
does not reproduce back to generate()."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from shared.settings import Settings

SENTENCES = [
    "今天天气很好。",
    "谢谢你的帮助！",
    "明天可能会下雨，记得带伞。",
    "我们去公园散步吧。",
    "你好。",
    "这是一个很长的句子，我们要看看它会怎么样。",
    "他说。",
    "请把门关上。",
]


def output_tokens(output: torch.Tensor, eos: int, pad: int) -> list[list[int]]:
    """generate()'s rows as ours: without the decoder start, up to and including the end of sentence."""
    rows = []
    for row in output[:, 1:].tolist():
        rows.append(row[: row.index(eos) + 1] if eos in row else [t for t in row if t != pad])
    return rows


@pytest.mark.parametrize("beams, min_new", [(1, 0), (1, 6), (4, 0), (4, 6)])
def test_engine_gives_transformers_tokens_with_marians_rules(engine, model_dir, beams, min_new):
    """No pad, no early end, forced end at the last step: exactly what generate() does with them."""
    from worker.translation.model.decoding import Decoder

    decoder = Decoder.for_model(engine.model)
    assert decoder is not None and engine.decoder == decoder
    assert decoder.banned == (engine.tokenizer.pad_token_id,) and decoder.forced_eos == engine.tokenizer.eos_token_id
    eos, pad = engine.tokenizer.eos_token_id, engine.tokenizer.pad_token_id
    input_ids, mask = engine.batch_inputs(engine.token_ids(SENTENCES))
    args = {"input_ids": input_ids, "attention_mask": mask, "num_beams": beams, "max_new_tokens": 6}
    with torch.inference_mode():
        reference = engine.model.generate(min_new_tokens=min_new, **args)
        ours = decoder.generate(engine.model, input_ids, mask, beams, 6, min_new)
        unruled = replace(decoder, banned=(), forced_eos=None).generate(engine.model, input_ids, mask, beams, 6)
    assert ours == output_tokens(reference, eos, pad)
    # The rules did something: every output that ran to the limit ends with the forced end of sentence,
    # no output holds the pad token, and the same loop without the rules gives other tokens.
    assert all(row[-1] == eos for row in ours if len(row) == 6)
    assert all(pad not in row for row in ours)
    assert unruled != ours
    engine.num_beams, engine.min_new_tokens = beams, min_new
    try:
        texts = engine.translate_ids(engine.token_ids(SENTENCES))
    finally:
        engine.num_beams, engine.min_new_tokens = 1, 0
    decoded = engine.tokenizer.batch_decode(reference, skip_special_tokens=True)
    assert texts == [" ".join(t.split()) for t in decoded]


def _ours_and_generates(model, engine, beams: int, **config):
    """Our tokens and generate()'s, for the eight sentences, up to 12 new tokens."""
    from worker.translation.model.decoding import Decoder

    for name, value in config.items():
        setattr(model.generation_config, name, value)
    decoder = Decoder.for_model(model)
    assert decoder is not None and all(getattr(decoder, name) == value for name, value in config.items())
    input_ids, mask = engine.batch_inputs(engine.token_ids(SENTENCES))
    with torch.inference_mode():
        reference = model.generate(input_ids=input_ids, attention_mask=mask, num_beams=beams, max_new_tokens=12)
        ours = decoder.generate(model, input_ids, mask, beams, 12)
    return ours, output_tokens(reference, engine.tokenizer.eos_token_id, engine.tokenizer.pad_token_id)


@pytest.mark.parametrize(
    "length_penalty, early_stopping", [(1.0, False), (0.5, False), (2.0, True), (1.0, "never"), (-1.0, "never")]
)
def test_beam_search_matches_transformers_when_beams_end_early(eos_prone, engine, length_penalty, early_stopping):
    """Beams ending at different steps exercise the finished-beam bookkeeping and the early stop."""
    ours, reference = _ours_and_generates(
        eos_prone, engine, 4, length_penalty=length_penalty, early_stopping=early_stopping
    )
    assert ours == reference
    lengths = {len(row) for row in ours}
    assert len(lengths) > 1 and min(lengths) < 12, lengths  # outputs did end at different steps


def test_greedy_pads_finished_rows_and_stops_when_all_end(eos_prone, engine):
    ours, reference = _ours_and_generates(eos_prone, engine, 1, length_penalty=1.0, early_stopping=False)
    assert ours == reference
    assert len({len(row) for row in ours}) > 1


@pytest.mark.parametrize(
    "field, value",
    [
        ("no_repeat_ngram_size", 3),
        ("repetition_penalty", 1.2),
        ("bad_words_ids", [[5, 6]]),
        ("eos_token_id", [0, 7]),
        ("forced_bos_token_id", 3),
        ("min_length", 4),
        ("num_return_sequences", 2),
        ("do_sample", True),
    ],
)
def test_configs_it_does_not_reproduce_stay_with_generate(model_dir, field, value):
    from transformers import AutoModelForSeq2SeqLM

    from worker.translation.model.decoding import Decoder

    model = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir))
    assert Decoder.for_model(model) is not None
    setattr(model.generation_config, field, value)
    assert Decoder.for_model(model) is None


def test_a_config_spelling_out_defaults_keeps_the_fast_path(model_dir):
    """transformers writes defaults out in full (output_attentions: false, ...); values are compared with
    transformers' defaults, so such a config, and opus-mt's renormalize_logits, keep our loop."""
    from transformers import AutoModelForSeq2SeqLM

    from worker.translation.model.decoding import Decoder
    from worker.translation.model.generation_config import unsupported

    model = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir))
    assert model.generation_config.renormalize_logits is True  # built like opus-mt's config
    spelled_out = {
        "output_attentions": False,
        "output_hidden_states": False,
        "output_scores": False,
        "return_dict_in_generate": False,
        "num_return_sequences": 1,
        "no_repeat_ngram_size": 0,
        "repetition_penalty": 1.0,
        "min_length": 0,
        "temperature": 1.0,
        "top_k": 50,
        "top_p": 1.0,
        "diversity_penalty": 0.0,
        "remove_invalid_values": False,
    }
    for name, value in spelled_out.items():
        setattr(model.generation_config, name, value)
    assert unsupported(model) == []
    decoder = Decoder.for_model(model)
    assert decoder is not None and decoder.renormalize


@pytest.mark.parametrize("beams", [1, 4])
def test_renormalized_tokens_and_scores_match_generate(eos_prone, engine, beams):
    """renormalize_logits: log-softmax again after the bad-words and forced-end rules, as transformers'
    LogitNormalization does; the tokens and the scores generate() reports are ours."""
    from worker.translation.model.decoding import Decoder

    eos_prone.generation_config.renormalize_logits = True
    decoder = Decoder.for_model(eos_prone)
    assert decoder is not None and decoder.renormalize
    input_ids, mask = engine.batch_inputs(engine.token_ids(SENTENCES))
    eos, pad = engine.tokenizer.eos_token_id, engine.tokenizer.pad_token_id
    with torch.inference_mode():
        reference = eos_prone.generate(
            input_ids=input_ids,
            attention_mask=mask,
            num_beams=beams,
            max_new_tokens=12,
            min_new_tokens=3,  # the end token banned at first: renormalizing moves its probability mass
            output_scores=True,
            return_dict_in_generate=True,
        )
        scores: list = []
        ours = decoder.generate(eos_prone, input_ids, mask, beams, 12, 3, scores=scores)
        plain = replace(decoder, renormalize=False)
        plain_scores: list = []
        plain.generate(eos_prone, input_ids, mask, beams, 12, 3, scores=plain_scores)
    assert ours == output_tokens(reference.sequences, eos, pad)
    if beams == 1:
        steps = torch.stack(reference.scores, dim=1)  # sentences x steps x vocabulary
        expected = [steps[row, range(len(tokens)), tokens].tolist() for row, tokens in enumerate(ours)]
        for got, want in zip(scores, expected):
            assert got == pytest.approx(want, abs=1e-5)
    else:
        assert scores == pytest.approx(reference.sequences_scores.tolist(), abs=1e-5)
    # Renormalizing did change the scores (the forced end and the banned pad moved the probability mass).
    if beams == 1:  # per token: the same tokens (an argmax does not move), other scores
        plain_scores, scores = [v for row in plain_scores for v in row], [v for row in scores for v in row]
    assert plain_scores != pytest.approx(scores, abs=1e-5)


def test_engine_falls_back_to_generate(model_dir, tmp_path, caplog):
    """A model whose generation config the loop does not reproduce still translates, through generate(),
    and says so: a warning naming the field, and `decoding` in what the worker reports."""
    import logging
    import shutil

    from transformers import GenerationConfig

    from worker.translation.model.engine import TranslationEngine, describe

    folder = tmp_path / "model"
    shutil.copytree(model_dir, folder)
    config = GenerationConfig.from_pretrained(str(folder))
    config.no_repeat_ngram_size = 2
    config.save_pretrained(str(folder))
    with caplog.at_level(logging.WARNING, logger="worker.translation.model.engine"):
        engine = TranslationEngine(Settings(model=str(folder), max_new_tokens=6, min_new_tokens=3))
    assert engine.decoder is None and engine.decoding == "generate"
    assert any("no_repeat_ngram_size=2" in r.getMessage() and "generate()" in r.getMessage() for r in caplog.records)
    assert describe(engine)["decoding"] == "generate"
    input_ids, mask = engine.batch_inputs(engine.token_ids(SENTENCES))
    with torch.inference_mode():
        reference = engine.model.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=6, min_new_tokens=3)
    decoded = engine.tokenizer.batch_decode(reference, skip_special_tokens=True)
    assert engine.translate_ids(engine.token_ids(SENTENCES)) == [" ".join(t.split()) for t in decoded]
