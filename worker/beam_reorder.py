"""Beam search without copying the cross-attention cache at every step.

After each beam-search step transformers reorders the whole key/value cache with `index_select`:
the decoder's own keys and values, and the cross-attention keys and values computed once from the
encoder output. A beam only ever takes the place of another beam of the same sentence (the indices
are offset per sentence), and every beam of a sentence holds the same cross-attention rows, copied
from one encoder output, so reordering them copies identical rows onto each other. For opus-mt at
beam 4 that copy is most of the reorder: 6 layers x 2 x rows x source length x 512 floats per step.
This keeps the self-attention reorder and skips the other; tests/worker/test_engine.py checks that
beam-search output is unchanged.
"""

from __future__ import annotations

import torch
from transformers.cache_utils import EncoderDecoderCache


def reorder_self_attention_only(cache: object, beam_idx: torch.LongTensor) -> object:
    """`_reorder_cache` for encoder-decoder models: other caches are reordered in full, as before."""
    if isinstance(cache, EncoderDecoderCache):
        cache.self_attention_cache.reorder_cache(beam_idx)
    else:
        cache.reorder_cache(beam_idx)  # type: ignore[attr-defined]
    return cache


def install(model: torch.nn.Module) -> bool:
    """Use the shortcut on this encoder-decoder model (generate looks for `_reorder_cache` first)."""
    if not getattr(model.config, "is_encoder_decoder", False) or hasattr(model, "_reorder_cache"):
        return False
    model._reorder_cache = reorder_self_attention_only  # type: ignore[assignment]
    return True
