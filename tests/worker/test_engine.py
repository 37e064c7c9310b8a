"""The engine loads the test model through the same from_pretrained path as the real model."""

import pytest

from shared.settings import Settings


@pytest.fixture(scope="module")
def engine(model_dir):
    from worker.engine import TranslationEngine

    return TranslationEngine(Settings(model=str(model_dir), max_new_tokens=6, max_input_tokens=16))


def test_loads_quantized_and_translates_a_batch(engine):
    import torch

    assert engine.quantization == "int8-dynamic-emb8"
    assert any(isinstance(m, torch.ao.nn.quantized.dynamic.Linear) for m in engine.model.modules())
    # One 8-bit table behind the encoder's, the decoder's and the shared embedding, no fp32 table left.
    inner = engine.model.model
    assert isinstance(inner.shared, torch.ao.nn.quantized.Embedding)
    assert inner.shared is inner.encoder.embed_tokens is inner.decoder.embed_tokens
    assert not any(type(m) is torch.nn.Embedding for m in engine.model.modules())
    ids = engine.token_ids(["今天天气很好。", "谢谢你的帮助！"])
    out = engine.translate_ids(ids)
    assert len(out) == 2 and all(isinstance(t, str) for t in out)
    assert all("<pad>" not in t and "</s>" not in t for t in out)


def test_long_input_is_chunked_within_the_position_limit(engine):
    ids = engine.token_ids(["这是一个很长的句子" * 20])[0]
    chunks = engine.chunks(ids)
    assert len(chunks) > 1 and all(len(c) <= engine.max_input_tokens for c in chunks)
    assert [t for c in chunks for t in c] == ids


def test_identity_names_model_revision_and_generation(engine):
    identity = engine.identity
    assert identity["revision"].startswith("local-")
    assert identity["num_beams"] == 1 and identity["max_new_tokens"] == 6


def test_unloadable_model_is_a_clear_error(tmp_path):
    from worker.engine import ModelLoadError, TranslationEngine

    with pytest.raises(ModelLoadError, match="cannot load model"):
        TranslationEngine(Settings(model=str(tmp_path / "missing")))


def test_int8_swap_releases_pages_without_changing_weights(model_dir):
    """Dropping file pages must never zero a weight: they fault back in from the file."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from worker.quantization import FileMappings, quantize_int8, release_file_pages

    model = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    reference = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir))
    reference.eval()
    qconfigs = {
        torch.nn.Linear: torch.ao.quantization.default_dynamic_qconfig,
        torch.nn.Embedding: torch.ao.quantization.float_qparams_weight_only_qconfig,
    }
    reference = torch.ao.quantization.quantize_dynamic(reference, qconfigs, dtype=torch.qint8)
    assert quantize_int8(model) > 0
    for name, param in model.named_parameters():
        assert torch.equal(param, before[name]), name
    ids = torch.tensor([[5, 6, 7, 0]])
    with torch.inference_mode():
        assert torch.equal(
            model.generate(input_ids=ids, max_new_tokens=5), reference.generate(input_ids=ids, max_new_tokens=5)
        )
    # Anonymous memory is never released (that would zero it).
    anonymous = torch.ones(4096 * 4)
    assert release_file_pages(anonymous, FileMappings()) == 0 and anonymous.sum() == 4096 * 4


def test_fast_marian_positions_are_bit_identical():
    import torch
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    import worker.engine  # noqa: F401 - installs the fast table
    from worker.marian_positions import _create_weight

    for n_pos, dim in ((512, 512), (64, 31), (7, 8)):
        module = MarianSinusoidalPositionalEmbedding(n_pos, dim)
        original = MarianSinusoidalPositionalEmbedding._transq_original_create_weight(module)
        assert torch.equal(_create_weight(module), original)


def test_beam_search_skips_the_cross_attention_reorder_without_changing_output(model_dir):
    """Beams never leave their sentence, so cross-attention rows need no reordering: same tokens."""
    import torch

    from worker.engine import TranslationEngine

    engine = TranslationEngine(Settings(model=str(model_dir), num_beams=4, max_new_tokens=8, min_new_tokens=8))
    model = engine.model
    shortcut = model._reorder_cache
    calls = []
    model._reorder_cache = lambda cache, beam_idx: calls.append(beam_idx.clone()) or shortcut(cache, beam_idx)
    sentences = ["今天天气很好。", "谢谢你的帮助！", "明天可能会下雨，记得带伞。", "我们去公园散步吧。"]
    input_ids, mask = engine.batch_inputs(engine.token_ids(sentences))
    args = {"num_beams": 4, "max_new_tokens": 8, "min_new_tokens": 8, "do_sample": False}
    with torch.inference_mode():
        fast = model.generate(input_ids=input_ids, attention_mask=mask, **args)
        # The shortcut ran, and beams did move (otherwise it would prove nothing).
        assert calls and any(not torch.equal(b, torch.arange(len(b))) for b in calls)
        del model._reorder_cache  # transformers' own full reorder
        full = model.generate(input_ids=input_ids, attention_mask=mask, **args)
    assert torch.equal(fast, full)


@pytest.mark.parametrize("beams, min_new", [(1, 0), (1, 6), (4, 0), (4, 6)])
def test_special_token_rules_in_place_give_transformers_tokens(model_dir, beams, min_new):
    """No pad, no early end, forced end at the last step: in place, and exactly transformers' tokens."""
    import torch
    from transformers import GenerationConfig, LogitsProcessorList

    from worker.engine import TranslationEngine

    settings = Settings(model=str(model_dir), num_beams=beams, max_new_tokens=6, min_new_tokens=min_new)
    engine = TranslationEngine(settings)
    model, eos, pad = engine.model, engine.tokenizer.eos_token_id, engine.tokenizer.pad_token_id
    taken = engine.special_tokens
    assert taken is not None and model.generation_config.forced_eos_token_id is None
    sentences = ["今天天气很好。", "谢谢你的帮助！", "明天可能会下雨，记得带伞。", "我们去公园散步吧。"]
    input_ids, mask = engine.batch_inputs(engine.token_ids(sentences))
    original = GenerationConfig.from_pretrained(str(model_dir))  # what transformers would apply
    args = {"input_ids": input_ids, "attention_mask": mask, "num_beams": beams, "max_new_tokens": 6}
    with torch.inference_mode():
        # transformers' own processors, from the model's original generation config
        reference = model.generate(generation_config=original, min_new_tokens=min_new, **args)
        ours = model.generate(logits_processor=LogitsProcessorList([taken.rules(min_new, 6)]), **args)
        unruled = model.generate(**args)
    assert torch.equal(ours, reference)
    # The rules did something: rows that ran to the limit end with the forced end of sentence, and the
    # same model without the rules does not give these tokens.
    assert all(row[-1] == eos for row in ours if len(row) == 7)
    assert not ((ours[:, 1:] == pad) & (ours[:, :-1] != eos) & (ours[:, :-1] != pad)).any()
    assert not torch.equal(unruled, reference)
    assert engine.translate_ids(engine.token_ids(sentences)) == [
        " ".join(t.split()) for t in engine.tokenizer.batch_decode(reference, skip_special_tokens=True)
    ]


def test_special_token_rules_stay_with_transformers_when_order_matters():
    from types import SimpleNamespace

    from transformers import GenerationConfig

    from worker import special_tokens

    def model(**config):
        return SimpleNamespace(generation_config=GenerationConfig(eos_token_id=0, **config))

    for config in ({"bad_words_ids": [[5, 6]]}, {"forced_bos_token_id": 3}, {"min_length": 4}):
        untouched = model(**config)
        assert special_tokens.take_over(untouched) is None
        assert untouched.generation_config.eos_token_id == 0
    marian_like = model(bad_words_ids=[[9]], forced_eos_token_id=0)
    taken = special_tokens.take_over(marian_like)
    assert marian_like.generation_config.bad_words_ids is None
    assert marian_like.generation_config.forced_eos_token_id is None
    assert taken.banned == [9] and taken.forced_eos == [0] and taken.rules(0, 8).eos == []
