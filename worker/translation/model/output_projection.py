"""The decoder's output layer, over the whole vocabulary or over the target vocabulary only.

opus-mt models share one vocabulary between source and target (65,001 pieces for zh-en), yet the decoder
was trained to write target pieces only: target.spm's, about half of them. Its output layer is the
largest matrix of a decoding step (65,001 x 512: more multiply-adds than the six decoder layers
together). By default (`TRANSQ_TARGET_VOCABULARY=1`) the engine multiplies by the target pieces' rows only
and the decoding loop works in those columns (CTranslate2's vocabulary mapping does the same); `0` keeps
the whole layer. A model without a target.spm, or whose target vocabulary is the whole vocabulary, keeps
the full layer.
"""

from __future__ import annotations

import logging
from typing import Any, Sequence

import torch

from worker.translation.model.quantization import int8_linear, is_int8_linear

log = logging.getLogger(__name__)


class OutputProjection:
    """hidden states -> float32 logits over `columns` (a token id per column; None: every token, in order)."""

    def __init__(self, head: torch.nn.Module, bias: torch.Tensor | None, columns: torch.Tensor | None):
        self.head, self.bias, self.columns = head, bias, columns
        self._column_of: dict[int, int] | None = None

    @classmethod
    def full(cls, model: Any) -> OutputProjection:
        """Exactly the model's own `lm_head(h) + final_logits_bias`."""
        return cls(model.get_output_embeddings(), getattr(model, "final_logits_bias", None), None)

    @classmethod
    def restricted(cls, model: Any, token_ids: Sequence[int]) -> OutputProjection:
        """A new output layer holding only these tokens' rows (a module of the model, `transq_target_head`).
        Of an int8 model (call after quantizing), the rows of its int8 layer with the same scale: each
        column's logit is the full layer's, bit for bit, and no float copy is made (+17 MiB, not a 66 MiB
        float layer to quantize)."""
        head = model.get_output_embeddings()
        ids = torch.tensor(sorted(set(token_ids)), dtype=torch.long)
        model.transq_target_head = _int8_rows(head, ids) if is_int8_linear(head) else _float_rows(head, ids)
        bias = getattr(model, "final_logits_bias", None)
        return cls(model.transq_target_head, None if bias is None else bias[:, ids.to(bias.device)].clone(), ids)

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        logits = self.head(hidden)
        if self.bias is not None and logits.dtype == self.bias.dtype == torch.float32:
            logits += self.bias.to(logits.device)  # in place: the layer's output is a new tensor
        elif self.bias is not None:
            logits = logits + self.bias.to(logits.device)
        return logits if logits.dtype == torch.float32 and logits.is_contiguous() else logits.float().contiguous()

    def column(self, token: int) -> int | None:
        """The column of a token id (None where the restricted layer leaves it out)."""
        if self.columns is None:
            return token
        if self._column_of is None:
            self._column_of = {int(t): c for c, t in enumerate(self.columns.tolist())}
        return self._column_of.get(int(token))

    def tokens(self, columns: torch.Tensor) -> torch.Tensor:
        """Token ids of columns."""
        return columns if self.columns is None else self.columns.to(columns.device)[columns]


def _int8_rows(head: Any, ids: torch.Tensor) -> torch.nn.Module:
    """These rows of a dynamic int8 Linear (per-tensor scale), as a dynamic int8 Linear of their own."""
    weight = head.weight()  # the packed layer unpacked: one int8 copy, freed on return
    rows = weight.index_select(0, ids)  # the same integers and scale, without a full int_repr() copy
    del weight
    bias = head.bias()
    return int8_linear(rows, None if bias is None else bias.index_select(0, ids))


def _float_rows(head: Any, ids: torch.Tensor) -> torch.nn.Module:
    """These rows of a float Linear, as a Linear of their own (one copy of them)."""
    weight = head.weight
    layer = torch.nn.Linear(weight.shape[1], len(ids), bias=False, device="meta", dtype=weight.dtype)
    layer.weight = torch.nn.Parameter(weight.index_select(0, ids.to(weight.device)), requires_grad=False)
    return layer


def target_token_ids(tokenizer: Any) -> list[int] | None:
    """The vocabulary ids of the target sentencepiece model's pieces (a Marian tokenizer's target.spm), or
    None where the tokenizer has none or the target side covers the whole vocabulary."""
    target = getattr(tokenizer, "spm_target", None)
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    if target is None or not vocab:
        return None
    ids = {vocab[p] for p in (target.id_to_piece(i) for i in range(target.get_piece_size())) if p in vocab}
    ids.add(tokenizer.eos_token_id)
    return sorted(ids) if len(ids) < len(vocab) - 1 else None
