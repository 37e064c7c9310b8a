"""The engine's faster parts give what they replace: torch's argmax, transformers' cache reorders and row
selections (copying only the rows that move), an int8 layer's q/k/v products, its encoder states, its
output layer's columns, and each beam's cross-attention."""

from __future__ import annotations

import pytest
import torch

from tests.worker.translation.model.test_decoding import SENTENCES


def _scores(rows: int, width: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(rows * width)
    return torch.randn(rows, width, generator=generator)


@pytest.mark.parametrize("rows, width", [(32, 65001), (8, 32300), (5, 1280), (2, 65001), (6, 100)])
def test_argmax_rows_is_torchs_argmax_ties_and_tail_included(rows, width):
    from worker.translation.model.row_top import argmax_rows

    scores = _scores(rows, width)
    assert torch.equal(argmax_rows(scores), scores.argmax(-1))
    tied = (scores * 2).round()  # many equal maxima: the first column holding it wins
    tied[0, -1] = tied.max() + 1  # the best column in the last, partial chunk
    tied[-1] = -torch.inf  # a forced row: every column banned but one
    tied[-1, width // 2] = 0.0
    assert torch.equal(argmax_rows(tied), tied.argmax(-1))


def test_compacting_order_moves_only_rows_from_the_end_into_the_places_that_leave():
    from worker.translation.model.fused_decoder import compacting_order

    keep = torch.tensor([True, False, True, True, False, True, True, False])
    order = compacting_order(keep)
    assert sorted(order.tolist()) == keep.nonzero()[:, 0].tolist()
    assert order.tolist() == [0, 5, 2, 3, 6]  # rows 0, 2, 3 stay; 5 and 6 fill the places of 1 and 4
    assert compacting_order(torch.ones(4, dtype=torch.bool)).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("moved", ["few", "most"])
def test_fused_steps_reorder_and_select_rows_as_transformers_cache_does(engine, moved):
    """After the same reorders and row selections, the fused steps' logits are those of transformers'
    own decoder over its cache (worker.translation.model.decoder_steps)."""
    from worker.translation.model.decoder_steps import DecoderSteps
    from worker.translation.model.decoding import Decoder
    from worker.translation.model.fused_decoder import FusedSteps

    model = engine.model
    input_ids, mask = engine.batch_inputs(engine.token_ids(SENTENCES))
    cache_argument = Decoder.for_model(model).cache_argument
    tokens = torch.tensor([[5], [9], [13], [7], [11], [6], [8], [10]])
    with torch.inference_mode():
        hidden = model.get_encoder()(input_ids=input_ids, attention_mask=mask).last_hidden_state
        fused = FusedSteps(model, hidden, mask, 10)
        reference = DecoderSteps(model, hidden, mask, cache_argument)
        for _ in range(3):
            assert torch.equal(fused(tokens), reference(tokens))
        reorder = [0, 0, 2, 3, 4, 5, 1, 7] if moved == "few" else [1, 0, 3, 2, 5, 4, 7, 6]
        for steps in (fused, reference):
            steps.keep_rows(torch.tensor(reorder))
        assert torch.equal(fused(tokens), reference(tokens))
        select = torch.tensor([0, 6, 2, 5])  # rows 6 and 5 fill the places of 1 and 3, the others leave
        for steps in (fused, reference):
            steps.select_rows(select)
        assert torch.equal(fused(tokens[:4]), reference(tokens[:4]))
        assert fused.keys[0].shape[0] == 4 and fused.cross[0].shape[0] == 4
        for again in ([1, 0, 3, 2], [0, 0, 2, 3]):  # on the narrowed buffers: the spare swap, then moved rows
            for steps in (fused, reference):
                steps.keep_rows(torch.tensor(again))
            assert torch.equal(fused(tokens[:4]), reference(tokens[:4]))
        for steps in (fused, reference):
            steps.select_rows(torch.tensor([2, 1]))
        assert torch.equal(fused(tokens[:2]), reference(tokens[:2]))


def test_an_int8_layers_fused_qkv_gives_its_three_projections_bit_for_bit(model_dir):
    """One int8 product, the three outputs side by side exactly; a float layer is not fused."""
    from transformers import AutoModelForSeq2SeqLM

    from worker.translation.model.fused_projections import fused_qkv
    from worker.translation.model.quantization import quantize_int8

    quantized = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir)).eval()
    assert fused_qkv(quantized.get_decoder().layers[0].self_attn) is None
    quantize_int8(quantized)
    attention = quantized.get_decoder().layers[0].self_attn
    fused = fused_qkv(attention)
    assert fused is not None and fused_qkv(attention) is fused  # built once, kept on the module
    hidden = torch.randn(5, 1, quantized.config.d_model, generator=torch.Generator().manual_seed(3))
    with torch.inference_mode():
        separate = torch.cat([attention.q_proj(hidden), attention.k_proj(hidden), attention.v_proj(hidden)], -1)
        assert torch.equal(fused(hidden), separate)


def test_an_int8_encoder_runs_in_groups_of_like_length_with_each_rows_states(model_dir):
    """Grouped by length, an int8 batch's encoder states are those of each group encoded alone, in the
    batch's rows, and zeros beyond the group's longest row. A float model is encoded whole, as transformers does."""
    from transformers import AutoModelForSeq2SeqLM

    from worker.translation.model import encoding
    from worker.translation.model.quantization import quantize_int8

    model = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir)).eval()
    lengths = [3, 9, 4, 12, 5, 7, 2, 11, 6, 10]
    input_ids = torch.ones((len(lengths), 12), dtype=torch.long)
    mask = torch.zeros_like(input_ids)
    for row, length in enumerate(lengths):
        input_ids[row, :length] = torch.arange(5, 5 + length)
        mask[row, :length] = 1
    encoder = model.get_encoder()
    with torch.inference_mode():
        whole = encoder(input_ids=input_ids, attention_mask=mask).last_hidden_state
        assert torch.equal(encoding.encode(model, input_ids, mask), whole)
        quantize_int8(model)
        grouped = encoding.encode(model, input_ids, mask)
        order = sorted(range(len(lengths)), key=lambda r: lengths[r])
        for start in range(0, len(order), encoding.GROUP_ROWS):
            rows = order[start : start + encoding.GROUP_ROWS]
            width = max(lengths[r] for r in rows)
            alone = encoder(input_ids=input_ids[rows, :width], attention_mask=mask[rows, :width]).last_hidden_state
            for i, row in enumerate(rows):
                assert torch.equal(grouped[row, :width], alone[i])
                assert not grouped[row, width:].any()


def test_an_int8_models_beams_share_their_sentences_cross_attention(model_dir, engine):
    """At beam 4 an int8 model keeps one copy of each sentence's cross-attention keys and values, and a
    sentence's beams attend to it together: the logits are those of a copy per beam (to float rounding),
    through reorders within sentences and sentences leaving."""
    from transformers import AutoModelForSeq2SeqLM

    from worker.translation.model.fused_decoder import FusedSteps
    from worker.translation.model.quantization import quantize_int8

    model = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir)).eval()
    quantize_int8(model)
    input_ids, mask = engine.batch_inputs(engine.token_ids(SENTENCES[:3]))
    beams = 4
    tokens = torch.arange(5, 5 + 3 * beams)[:, None]
    with torch.inference_mode():
        hidden = model.get_encoder()(input_ids=input_ids, attention_mask=mask).last_hidden_state
        shared = FusedSteps(model, hidden, mask, 8, beams=beams)
        copied = FusedSteps(model, hidden.repeat_interleave(beams, 0), mask.repeat_interleave(beams, 0), 8)
        assert shared.beams == beams and copied.beams == 1
        assert shared.cross[0].shape[0] == 3 and copied.cross[0].shape[0] == 3 * beams
        for _ in range(2):
            torch.testing.assert_close(shared(tokens), copied(tokens), rtol=1e-4, atol=1e-4)
        reorder = torch.tensor([0, 0, 1, 2, 5, 4, 4, 7, 11, 10, 9, 8])  # beams move within their sentence
        for steps in (shared, copied):
            steps.keep_rows(reorder)
        torch.testing.assert_close(shared(tokens), copied(tokens), rtol=1e-4, atol=1e-4)
        # the first sentence leaves, the last fills its place (its beams reordered as they move)
        leave = torch.tensor([9, 9, 8, 10, 4, 5, 6, 7])
        for steps in (shared, copied):
            steps.select_rows(leave)
        assert shared.cross[0].shape[0] == 2
        torch.testing.assert_close(shared(tokens[:8]), copied(tokens[:8]), rtol=1e-4, atol=1e-4)


def test_an_int8_target_head_gives_the_full_layers_logits_in_its_columns(split_model_dir, split_engine):
    """The restricted int8 output layer is the full int8 layer's rows with its scale: bit-identical logits."""
    from transformers import AutoModelForSeq2SeqLM

    from worker.translation.model.output_projection import OutputProjection, target_token_ids
    from worker.translation.model.quantization import quantize_int8

    model = AutoModelForSeq2SeqLM.from_pretrained(str(split_model_dir)).eval()
    quantize_int8(model)
    target = target_token_ids(split_engine.tokenizer)
    assert target is not None
    restricted, full = OutputProjection.restricted(model, target), OutputProjection.full(model)
    hidden = torch.randn(6, model.config.d_model, generator=torch.Generator().manual_seed(5))
    with torch.inference_mode():
        assert torch.equal(restricted(hidden), full(hidden)[:, target])
