"""A model's generation rules as the decoding loops apply them (worker.translation.model.decoding,
worker.translation.model.beam_search): its special tokens, length penalty and early stopping, and
transformers' logits processors for its config (no repeated n-grams, no bad words, a minimum length, a
forced end), applied in place in the output layer's columns."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from worker.translation.model.output_projection import OutputProjection


@dataclass(frozen=True)
class GenerationRules:
    """The generation rules of one model (its generation config, as transformers applies it)."""

    start: int
    eos: int
    pad: int
    banned: tuple[int, ...]
    forced_eos: int | None
    length_penalty: float
    early_stopping: bool | str
    cache_argument: str  # the forward() argument that takes the key/value cache
    renormalize: bool = False  # log-softmax again after the rules, as transformers' LogitNormalization

    def apply_rules(
        self,
        scores: torch.Tensor,
        new_tokens: int,
        min_new: int,
        at_limit: torch.Tensor,
        rules: Rules,
        history: Callable[[], list[list[int]]],
    ) -> None:
        """transformers' NoRepeatNGram, NoBadWords, MinNewTokens and ForcedEOS processors, in place, in the
        output layer's columns (`at_limit`: the rows at their last step; `history`: each row's tokens)."""
        if rules.no_repeat_ngram:
            _block_repeated_ngrams(scores, history(), rules)
        if rules.banned:
            scores[:, rules.banned] = -math.inf
        if new_tokens < min_new and rules.eos is not None:
            scores[:, rules.eos] = -math.inf
        if rules.forced is not None and bool(at_limit.any()):
            rows = at_limit.nonzero()[:, 0]
            scores[rows] = -math.inf
            scores[rows, rules.forced] = 0


@dataclass(frozen=True)
class Rules:
    """The generation rules' tokens as columns of the output layer (None: a column it does not have)."""

    eos: int | None
    banned: list[int]
    forced: int | None
    no_repeat_ngram: int
    projection: OutputProjection

    @classmethod
    def of(cls, decoder: GenerationRules, projection: OutputProjection, no_repeat_ngram: int = 0) -> Rules:
        banned = [c for c in (projection.column(t) for t in decoder.banned) if c is not None]
        forced = None if decoder.forced_eos is None else projection.column(decoder.forced_eos)
        return cls(projection.column(decoder.eos), banned, forced, no_repeat_ngram, projection)


def _block_repeated_ngrams(scores: torch.Tensor, history: list[list[int]], rules: Rules) -> None:
    """transformers' NoRepeatNGramLogitsProcessor: a token that would repeat an n-gram of the row is banned."""
    size = rules.no_repeat_ngram
    for row, tokens in enumerate(history):
        if len(tokens) + 1 < size:
            continue
        prefix = tokens[len(tokens) - size + 1 :]
        repeated = {tokens[i + size - 1] for i in range(len(tokens) - size + 1) if tokens[i : i + size - 1] == prefix}
        columns = [c for c in (rules.projection.column(t) for t in repeated) if c is not None]
        if columns:
            scores[row, columns] = -math.inf
