"""The special-token rules of generation, applied in place.

transformers enforces three rules of Marian's generation config with three logits processors, each
of which copies the whole (rows x vocabulary) score tensor at every step: no pad token
(`bad_words_ids=[[pad]]`), no end of sentence before `min_new_tokens`, and end of sentence at the
last step (`forced_eos_token_id`). For opus-mt that is three 65,001-column copies per row per step,
a tenth to a quarter of the time of a batch and a share of its peak memory. `SpecialTokenRules`
applies the same three rules to the scores in place; `take_over()` moves them out of the model's
generation config only when that gives exactly transformers' result, and otherwise leaves
generation as it is.
tests/worker/test_engine.py checks that the tokens are identical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from transformers import LogitsProcessor

# Processors transformers runs after the three rules, or that do not commute with them: with any of
# these configured, the rules stay with transformers.
_ORDER_SENSITIVE = (
    "forced_bos_token_id",
    "remove_invalid_values",
    "exponential_decay_length_penalty",
    "suppress_tokens",
    "begin_suppress_tokens",
    "renormalize_logits",
    "watermarking_config",
)


class SpecialTokenRules(LogitsProcessor):
    """Banned tokens, no end of sentence before `min_new_tokens`, forced end of sentence at the last
    step of `max_new_tokens`: written into the scores, without copying them."""

    def __init__(self, banned: list[int], eos: list[int], forced_eos: list[int], min_new: int, max_new: int):
        self.banned, self.eos, self.forced_eos = banned, eos, forced_eos  # lists index any device
        self.min_new = min_new
        self.max_new = max_new
        self.prompt_length: int | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.prompt_length is None:  # the first call sees only the decoder prompt
            self.prompt_length = input_ids.shape[-1]
        new_tokens = input_ids.shape[-1] - self.prompt_length
        if self.banned:
            scores[:, self.banned] = -math.inf
        if self.eos and new_tokens < self.min_new:
            scores[:, self.eos] = -math.inf
        if self.forced_eos and new_tokens == self.max_new - 1:
            scores.fill_(-math.inf)
            scores[:, self.forced_eos] = 0
        return scores


def _ids(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


@dataclass(frozen=True)
class SpecialTokens:
    """The model's special-token rules, taken out of its generation config."""

    banned: list[int]
    eos: list[int]
    forced_eos: list[int]

    def rules(self, min_new_tokens: int, max_new_tokens: int) -> SpecialTokenRules:
        """A fresh processor for one generate call (it remembers that call's prompt length)."""
        eos = self.eos if min_new_tokens else []
        return SpecialTokenRules(self.banned, eos, self.forced_eos, min_new_tokens, max_new_tokens)


def take_over(model: Any) -> SpecialTokens | None:
    """Move the three rules from `model.generation_config` into a SpecialTokens, so that generate()
    no longer builds transformers' copying processors (it fills every unset field from the model's
    config, so they must leave the model's config itself). None, config untouched, when the rules
    must stay with transformers to give the same tokens."""
    config = model.generation_config
    bad_words = config.bad_words_ids or []
    if any(len(words) != 1 for words in bad_words):
        return None
    if any(getattr(config, name, None) not in (None, False, []) for name in _ORDER_SENSITIVE):
        return None
    if getattr(config, "min_length", 0) or getattr(config, "min_new_tokens", None):
        return None  # length rules of the model's own
    taken = SpecialTokens(
        banned=[words[0] for words in bad_words],
        eos=_ids(config.eos_token_id),
        forced_eos=_ids(config.forced_eos_token_id),
    )
    config.bad_words_ids = None
    config.forced_eos_token_id = None
    return taken
