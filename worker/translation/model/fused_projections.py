"""One int8 product for a self-attention layer's query, key and value projections.

The three projections read the same input, and each dynamic int8 Linear quantizes it again and runs its
own small product: on 32 rows the three cost 1.75x one of three times the width (`python -m
bench.profile_engine`; 0.68 against 0.39 ms). Their int8 weights, stacked, with per-row scales equal to
each one's per-tensor scale, make one Linear whose outputs are the three outputs side by side, bit for bit
(the input is quantized once, with the same parameters; every output column keeps its weights, zero point
and scale; tests/worker/translation/model/test_decoding_kernels.py checks it). Only int8 models are fused: a float product of
another width may round differently, and float models must give transformers' logits exactly.
"""

from __future__ import annotations

from typing import Any

import torch

from worker.translation.model.quantization import int8_linear, is_int8_linear

FUSED = "transq_qkv"  # the attribute of the attention module that holds its fused projection


def fused_qkv(attention: Any) -> Any | None:
    """The attention module's fused q/k/v projection (built on first use and kept on the module), or None
    where its projections are not per-tensor dynamic int8 Linears (asked again each time: a model may be
    quantized later)."""
    if getattr(attention, FUSED, None) is None:
        setattr(attention, FUSED, _build(attention.q_proj, attention.k_proj, attention.v_proj))
    return getattr(attention, FUSED)


def _build(*projections: Any) -> Any | None:
    if not all(is_int8_linear(p) for p in projections):
        return None
    weights = [p.weight() for p in projections]
    if any(w.qscheme() != torch.per_tensor_affine or w.dtype != torch.qint8 for w in weights):
        return None
    scales = torch.cat([torch.full((w.shape[0],), w.q_scale(), dtype=torch.double) for w in weights])
    zero_points = torch.cat([torch.full((w.shape[0],), w.q_zero_point(), dtype=torch.long) for w in weights])
    stacked = torch._make_per_channel_quantized_tensor(
        torch.cat([w.int_repr() for w in weights]), scales, zero_points, 0
    )
    biases = [p.bias() for p in projections]
    return int8_linear(stacked, None if any(b is None for b in biases) else torch.cat(biases))
