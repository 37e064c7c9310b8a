"""The decoding loop's speedups keep generate()'s tokens: finished sentences leave the batch and its caches,
and the output layer can be restricted to the target vocabulary."""

from __future__ import annotations

import pytest
import torch

from shared.settings import Settings
from tests.worker.translation.model.test_decoding import SENTENCES, output_tokens


def _decoder_rows(model) -> tuple[list[int], list[int], list]:  # type: ignore[no-untyped-def]
    """Rows the decoder computes at each step (its first layer's self-attention query), and rows of each
    cross-attention key projection, recorded by forward hooks."""
    rows: list[int] = []
    cross: list[int] = []
    layers = model.get_decoder().layers
    handles = [
        layers[0].self_attn.q_proj.register_forward_pre_hook(lambda _m, args: rows.append(args[0].shape[0])),
        *(
            layer.encoder_attn.k_proj.register_forward_pre_hook(lambda _m, args: cross.append(args[0].shape[0]))
            for layer in layers
        ),
    ]
    return rows, cross, handles


@pytest.mark.parametrize("beams", [1, 4])
def test_finished_sentences_leave_the_batch(eos_prone, engine, beams):
    from worker.translation.model.decoding import Decoder

    decoder = Decoder.for_model(eos_prone)
    input_ids, mask = engine.batch_inputs(engine.token_ids(SENTENCES))
    rows, cross, handles = _decoder_rows(eos_prone)
    try:
        with torch.inference_mode():
            reference = eos_prone.generate(input_ids=input_ids, attention_mask=mask, num_beams=beams, max_new_tokens=12)
            del rows[:], cross[:]  # generate()'s own steps
            ours = decoder.generate(eos_prone, input_ids, mask, beams, 12)
    finally:
        for handle in handles:
            handle.remove()
    assert ours == output_tokens(reference, engine.tokenizer.eos_token_id, engine.tokenizer.pad_token_id)
    # cross-attention keys once per batch and layer, not once per step
    assert cross == [len(SENTENCES) * beams] * len(eos_prone.get_decoder().layers) and len(rows) > 1
    assert rows[0] == len(SENTENCES) * beams
    assert rows == sorted(rows, reverse=True) and rows[-1] < rows[0], rows
    if beams == 1:  # at each step, exactly the sentences that have not ended yet
        lengths = [len(row) for row in ours]
        assert rows == [sum(n > step for n in lengths) for step in range(len(rows))]


def _target_only(model, target: list[int]):  # type: ignore[no-untyped-def]
    """A copy of the model that, like a trained one, puts no weight on pieces outside its target side."""
    import copy

    trained = copy.deepcopy(model)
    with torch.no_grad():
        outside = torch.ones(trained.config.vocab_size, dtype=torch.bool)
        outside[target] = False
        trained.final_logits_bias[0, outside] = -30.0
    return trained


@pytest.mark.parametrize("beams", [1, 4])
def test_target_vocabulary_gives_generates_tokens_where_the_model_writes_target_pieces(
    split_eos_prone, split_engine, beams
):
    from worker.translation.model.decoding import Decoder
    from worker.translation.model.output_projection import OutputProjection, target_token_ids

    target = target_token_ids(split_engine.tokenizer)
    assert target is not None and len(target) < split_eos_prone.config.vocab_size / 2
    model = _target_only(split_eos_prone, target)
    projection = OutputProjection.restricted(model, target)
    decoder = Decoder.for_model(model)
    input_ids, mask = split_engine.batch_inputs(split_engine.token_ids(SENTENCES))
    with torch.inference_mode():
        assert projection(torch.zeros(3, model.config.d_model)).shape == (3, len(target))
        reference = model.generate(input_ids=input_ids, attention_mask=mask, num_beams=beams, max_new_tokens=12)
        ours = decoder.generate(model, input_ids, mask, beams, 12, projection=projection)
        # On the untrained model, which writes source pieces, the restriction keeps to target pieces.
        restricted = decoder.generate(
            split_eos_prone, input_ids, mask, beams, 12, projection=OutputProjection.restricted(split_eos_prone, target)
        )
        full = decoder.generate(split_eos_prone, input_ids, mask, beams, 12)
    assert ours == output_tokens(reference, split_engine.tokenizer.eos_token_id, split_engine.tokenizer.pad_token_id)
    allowed = set(target)
    assert all(token in allowed for row in restricted for token in row)
    assert any(token not in allowed for row in full for token in row)


def test_engine_with_target_vocabulary_caches_apart(split_model_dir):
    from worker.translation.model.engine import TranslationEngine

    engine = TranslationEngine(Settings(model=str(split_model_dir), max_new_tokens=6, target_vocabulary=True))
    assert engine.projection.columns is not None and engine.identity["output_vocabulary"] == "target"
    texts = engine.translate_ids(engine.token_ids(SENTENCES))
    assert len(texts) == len(SENTENCES) and all(isinstance(t, str) for t in texts)
    plain = TranslationEngine(Settings(model=str(split_model_dir), max_new_tokens=6, target_vocabulary=False))
    assert plain.projection.columns is None and "output_vocabulary" not in plain.identity
    assert Settings().target_vocabulary  # on by default
    from torch.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear

    assert isinstance(engine.projection.head, DynamicQuantizedLinear)  # the int8 layer's rows, no float copy


def test_an_engine_decoding_with_generate_keeps_the_whole_output_layer(split_model_dir, tmp_path):
    """generate() decodes over the model's own layer: no target head is built, none is in the identity."""
    import shutil

    from transformers import GenerationConfig

    from worker.translation.model.engine import TranslationEngine

    folder = tmp_path / "model"
    shutil.copytree(split_model_dir, folder)
    config = GenerationConfig.from_pretrained(str(folder))
    config.no_repeat_ngram_size = 2  # a field our loop does not reproduce
    config.save_pretrained(str(folder))
    engine = TranslationEngine(Settings(model=str(folder), max_new_tokens=6))
    assert engine.decoder is None and engine.settings.target_vocabulary
    assert engine.projection.columns is None and "output_vocabulary" not in engine.identity
    assert not hasattr(engine.model, "transq_target_head")
