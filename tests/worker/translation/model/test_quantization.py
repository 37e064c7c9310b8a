"""quantize_int8's chunked quantization: torch's own `from_float`, bit for bit, with less memory at its peak."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.ao.nn.quantized import Embedding as QuantizedEmbedding
from torch.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear

from worker.translation.model.quantization import CHUNK_ROWS, FileMappings, _quantized_module, quantize_int8

QCONFIGS = {
    torch.nn.Embedding: (QuantizedEmbedding, torch.ao.quantization.float_qparams_weight_only_qconfig),
    torch.nn.Linear: (DynamicQuantizedLinear, torch.ao.quantization.default_dynamic_qconfig),
}


def table(rows: int) -> torch.Tensor:
    weight = torch.randn(rows, 64, generator=torch.Generator().manual_seed(rows)) * 0.3
    weight[rows // 2, 3] = 9.0  # one outlier: the per-tensor scale is the whole weight's, not a chunk's
    return weight


@pytest.mark.parametrize("rows", [7, CHUNK_ROWS, 3 * CHUNK_ROWS + 5])
@pytest.mark.parametrize("kind", [torch.nn.Embedding, torch.nn.Linear])
def test_chunked_quantization_is_torchs_from_float(kind, rows):
    module = torch.nn.Embedding(rows, 64) if kind is torch.nn.Embedding else torch.nn.Linear(64, rows)
    module.weight.data = table(rows)
    quantized_type, qconfig = QCONFIGS[kind]
    module.qconfig = qconfig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = quantized_type.from_float(module)
    ours = _quantized_module(module, qconfig, FileMappings())
    assert type(ours) is type(theirs)
    a, b = theirs.weight(), ours.weight()
    assert a.qscheme() == b.qscheme()
    assert torch.equal(a.int_repr(), b.int_repr())
    if a.qscheme() == torch.per_tensor_affine:
        assert (a.q_scale(), a.q_zero_point()) == (b.q_scale(), b.q_zero_point())
    else:
        assert torch.equal(a.q_per_channel_scales(), b.q_per_channel_scales())
        assert torch.equal(a.q_per_channel_zero_points(), b.q_per_channel_zero_points())
    inputs = torch.randint(0, rows, (5, 9)) if kind is torch.nn.Embedding else torch.randn(5, 64)
    assert torch.equal(theirs(inputs), ours(inputs))


def test_tied_table_is_quantized_once_and_no_float_weight_stays():
    """Marian's tied embeddings: one table behind three modules gets one quantized copy, and no float
    Linear or Embedding weight is left referenced by the model."""
    shared = torch.nn.Embedding(100, 16)
    encoder, decoder = torch.nn.ModuleDict({"embed": shared}), torch.nn.ModuleDict({"embed": shared})
    model = torch.nn.ModuleDict({"shared": shared, "encoder": encoder, "decoder": decoder})
    model["head"] = torch.nn.Linear(16, 100)
    assert quantize_int8(model) == 2
    assert model["shared"] is encoder["embed"] is decoder["embed"]
    assert isinstance(model["shared"], QuantizedEmbedding) and isinstance(model["head"], DynamicQuantizedLinear)
    assert all(p.numel() <= 100 for p in model.parameters())  # biases only
