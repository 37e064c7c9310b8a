"""One decoder step at a time over a key/value cache, for worker.translation.model.decoding's loops.

The decoder runs on its own (not through the model's forward) so that the output layer is ours: the
model's own (the same operations as its forward) or one restricted to the target vocabulary. Rows leave
the batch as their sentences finish (`select_rows`): every later step computes only the rows still
running, and their caches (self- and cross-attention), encoder states and masks shrink with them.
Cross-attention keys and values are computed once, at the first step, and kept in the cache.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from transformers.cache_utils import DynamicCache, EncoderDecoderCache

from worker.translation.model.batching import BatchInterrupted
from worker.translation.model.output_projection import OutputProjection


class DecoderSteps:
    """One decoder step at a time over a key/value cache; returns float32 logits the caller may overwrite."""

    def __init__(
        self,
        model: Any,
        encoder_hidden: torch.Tensor,
        attention_mask: torch.Tensor,
        cache_argument: str,
        interrupt: Callable[[], bool] | None = None,
        projection: OutputProjection | None = None,
        beams: int = 1,
    ):
        """`encoder_hidden`, `attention_mask`: one row per sentence; each sentence decodes in `beams` rows
        (each with its own copy of the sentence's states, as transformers' beam search has them)."""
        if beams > 1:
            encoder_hidden = encoder_hidden.repeat_interleave(beams, dim=0)
            attention_mask = attention_mask.repeat_interleave(beams, dim=0)
        self.decoder = model.get_decoder()
        self.cache_argument = cache_argument
        self.interrupt = interrupt
        self.hidden = encoder_hidden
        self.attention_mask = attention_mask
        self.device = attention_mask.device
        self.projection = projection or OutputProjection.full(model)
        self.cache = EncoderDecoderCache(DynamicCache(config=model.config), DynamicCache(config=model.config))

    def __call__(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.interrupt is not None and self.interrupt():
            raise BatchInterrupted()
        out = self.decoder(
            input_ids=tokens.contiguous(),
            encoder_hidden_states=self.hidden,
            encoder_attention_mask=self.attention_mask,
            use_cache=True,
            **{self.cache_argument: self.cache},
        )
        return self.projection(out.last_hidden_state[:, -1, :])

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Continue from these rows' decoder states. Beams stay within their sentence and each sentence's
        cross-attention rows are copies of one encoder output, so only the decoder's own cache moves."""
        self.cache.self_attention_cache.reorder_cache(rows)

    def select_rows(self, rows: torch.Tensor) -> None:
        """Keep only these rows (in this order): the others' sentences are done."""
        self.cache.self_attention_cache.reorder_cache(rows)
        self.cache.cross_attention_cache.reorder_cache(rows)
        self.hidden = self.hidden.index_select(0, rows)
        self.attention_mask = self.attention_mask.index_select(0, rows)
