"""The encoder over a batch, in groups of sentences of like length, so that little of it is padding.

A decoding batch is padded to its longest sentence: 32 sentences of 21 to 67 tokens are 42 % padding
(`bench/data/zh_sentences.txt`, the second of its two greedy batches), and the encoder's products run over
the padding as over the text. Encoded in groups of 8 rows in length order, each padded to its own longest
row, the padding is 12 %: that batch's encoder time falls from 560 to 401 ms (2 cores of an AVX2 EPYC). The
states are put back in the batch's rows and columns; positions beyond a group's longest row hold zeros
(padding, which the decoder's cross-attention never attends).

Only int8 models are grouped: a float model's states must be transformers' bit for bit (tests compare
tokens with generate()), and a product over other rows may round otherwise; an int8 model's dynamic
quantization already depends on which rows share a batch.
"""

from __future__ import annotations

from typing import Any

import torch

from worker.translation.model.quantization import is_int8

GROUP_ROWS = 8


def encode(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The encoder's last hidden states, rows x length x d_model."""
    encoder = model.get_encoder()
    if len(input_ids) <= GROUP_ROWS or not is_int8(model) or not _padded_on_the_right(attention_mask):
        return encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    lengths = attention_mask.sum(dim=1)
    order = torch.argsort(lengths, stable=True)
    hidden: torch.Tensor | None = None
    for start in range(0, len(order), GROUP_ROWS):
        rows = order[start : start + GROUP_ROWS]
        width = int(lengths[rows].max())
        states = encoder(
            input_ids=input_ids[rows, :width], attention_mask=attention_mask[rows, :width]
        ).last_hidden_state
        if hidden is None:
            hidden = states.new_zeros((len(input_ids), input_ids.shape[1], states.shape[-1]))
        hidden[rows, :width] = states
    assert hidden is not None
    return hidden


def _padded_on_the_right(attention_mask: torch.Tensor) -> bool:
    """Whether some rows are padded, all of them after their tokens (as the engine's batches are)."""
    if bool(attention_mask.all()):
        return False
    columns = torch.arange(attention_mask.shape[1], device=attention_mask.device)
    return torch.equal(attention_mask.bool(), columns[None, :] < attention_mask.sum(dim=1)[:, None])
