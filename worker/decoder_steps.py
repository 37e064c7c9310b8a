"""One decoder step at a time over a key/value cache, for worker.decoding's loops."""

from __future__ import annotations

from typing import Any, Callable

import torch
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput

from worker.batching import BatchInterrupted


class DecoderSteps:
    """One decoder step at a time over a key/value cache; returns float32 logits the caller may overwrite."""

    def __init__(
        self,
        model: Any,
        encoder_outputs: BaseModelOutput,
        attention_mask: torch.Tensor,
        cache_argument: str,
        interrupt: Callable[[], bool] | None = None,
    ):
        self.model = model
        self.cache_argument = cache_argument
        self.interrupt = interrupt
        self.encoder_outputs = encoder_outputs
        self.attention_mask = attention_mask
        self.device = attention_mask.device
        self.cache = EncoderDecoderCache(DynamicCache(config=model.config), DynamicCache(config=model.config))

    def __call__(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.interrupt is not None and self.interrupt():
            raise BatchInterrupted()
        out = self.model(
            encoder_outputs=self.encoder_outputs,
            attention_mask=self.attention_mask,
            decoder_input_ids=tokens.contiguous(),
            use_cache=True,
            **{self.cache_argument: self.cache},
        )
        logits = out.logits[:, -1, :]
        return logits if logits.dtype == torch.float32 and logits.is_contiguous() else logits.float().contiguous()

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Continue from these rows' decoder states. Beams stay within their sentence and each sentence's
        cross-attention rows are copies of one encoder output, so only the decoder's own cache moves."""
        self.cache.self_attention_cache.reorder_cache(rows)
