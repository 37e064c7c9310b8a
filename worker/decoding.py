"""Greedy and beam-search decoding for encoder-decoder models, with the vocabulary-sized work cut down.

transformers' `generate` spends a quarter of a CPU beam-search batch outside the model, on tensors of
rows x vocabulary (65,001 columns for opus-mt): a copy of the logits, `log_softmax` into a new tensor,
the beam scores added into another, and a top-k over all beams' vocabularies at once; three logits
processors each copied the scores again (the special-token rules). This loop gives exactly
transformers' tokens (tests/worker/test_decoding.py compares them) and touches each row's vocabulary
twice: `log_softmax` in place, then a per-row top-k. The running beam score is the same for a whole
row, so a sentence's best 2K continuations are among its beams' best 2K tokens each: the scores are
added to those few candidates only, with the same float operations transformers uses.

It serves the generation configs it can reproduce (Marian's: single-token bad words, one end-of-
sentence token, forced end at the last step, length penalty, early stopping); `Decoder.for_model`
returns None for anything else, and the engine then calls `generate` as it is.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from transformers import GenerationConfig
from transformers.modeling_outputs import BaseModelOutput

from worker.decoder_steps import DecoderSteps

# Generation-config fields this loop reproduces, whatever their value (within the checks of `for_model`).
_REPRODUCED = {
    "bad_words_ids",
    "bos_token_id",
    "decoder_start_token_id",
    "eos_token_id",
    "forced_eos_token_id",
    "pad_token_id",
    "num_beams",
    "max_length",
    "max_new_tokens",
    "min_new_tokens",
    "length_penalty",
    "early_stopping",
    "renormalize_logits",
    "do_sample",
    "use_cache",
}
# Fields that never change the tokens: what generate() returns besides them, and bookkeeping.
_NO_EFFECT = {
    "output_attentions",
    "output_hidden_states",
    "output_scores",
    "output_logits",
    "return_dict_in_generate",
    "transformers_version",
    "_from_model_config",
    "_commit_hash",
}
# Sampling-only fields: without do_sample, transformers builds no warper from them.
_SAMPLING_ONLY = {"temperature", "top_k", "top_p", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff"}
_FINISHED = -1.0e9  # transformers' score for "not a candidate"


@dataclass(frozen=True)
class Decoder:
    """The generation rules of one model, and the loops that apply them."""

    start: int
    eos: int
    pad: int
    banned: tuple[int, ...]
    forced_eos: int | None
    length_penalty: float
    early_stopping: bool | str
    cache_argument: str  # the forward() argument that takes the key/value cache
    renormalize: bool = False  # log-softmax again after the rules, as transformers' LogitNormalization

    @classmethod
    def for_model(cls, model: Any) -> Decoder | None:
        """The decoder for this model's generation config, or None when only `generate` reproduces it."""
        return None if unsupported(model) else cls._build(model)

    @classmethod
    def _build(cls, model: Any) -> Decoder:
        config: GenerationConfig = model.generation_config
        eos, forced = _ids(config.eos_token_id), _ids(config.forced_eos_token_id)
        return cls(
            start=int(config.decoder_start_token_id),
            eos=eos[0],
            pad=int(config.pad_token_id),
            banned=tuple(words[0] for words in config.bad_words_ids or []),
            forced_eos=forced[0] if forced else None,
            length_penalty=float(config.length_penalty if config.length_penalty is not None else 1.0),
            early_stopping=config.early_stopping if config.early_stopping is not None else False,
            # transformers 5.x renames `past_key_values` to `cache`, model by model
            cache_argument="cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values",
            renormalize=bool(config.renormalize_logits),
        )

    def generate(
        self,
        model: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        num_beams: int,
        max_new_tokens: int,
        min_new_tokens: int = 0,
        interrupt: Callable[[], bool] | None = None,
        scores: list | None = None,
    ) -> list[list[int]]:
        """Each sentence's output tokens, up to and including its end of sentence. `interrupt` is asked
        before every decoding step; when it answers True the batch stops with BatchInterrupted. A `scores`
        list receives what generate() reports: each token's score (greedy), each sentence's (beam)."""
        encoder = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask)
        hidden = encoder.last_hidden_state
        if num_beams > 1:
            hidden = hidden.repeat_interleave(num_beams, dim=0)
            attention_mask = attention_mask.repeat_interleave(num_beams, dim=0)
        step = DecoderSteps(
            model, BaseModelOutput(last_hidden_state=hidden), attention_mask, self.cache_argument, interrupt
        )
        if num_beams == 1:
            return self._greedy(step, len(input_ids), max_new_tokens, min_new_tokens, scores)
        return self._beam_search(step, len(input_ids), num_beams, max_new_tokens, min_new_tokens, scores)

    def _apply_rules(self, scores: torch.Tensor, new_tokens: int, min_new: int, max_new: int) -> None:
        """transformers' NoBadWords, MinNewTokens and ForcedEOS processors, in place."""
        if self.banned:
            scores[:, list(self.banned)] = -math.inf
        if new_tokens < min_new:
            scores[:, self.eos] = -math.inf
        if self.forced_eos is not None and new_tokens == max_new - 1:
            scores.fill_(-math.inf)
            scores[:, self.forced_eos] = 0

    def _greedy(
        self, step: DecoderSteps, batch: int, max_new: int, min_new: int, scores_out: list | None = None
    ) -> list[list[int]]:
        device = step.device
        tokens = torch.full((batch, 1), self.start, dtype=torch.long, device=device)
        unfinished = torch.ones(batch, dtype=torch.long, device=device)
        out: list[torch.Tensor] = []
        for new in range(max_new):
            scores = step(tokens)
            self._apply_rules(scores, new, min_new, max_new)
            chosen = scores.argmax(dim=-1)  # renormalizing would not move the argmax
            if scores_out is not None:
                scored = torch.log_softmax(scores, -1) if self.renormalize else scores
                scores_out.append(scored.gather(1, chosen[:, None])[:, 0])
            chosen = chosen * unfinished + self.pad * (1 - unfinished)
            out.append(chosen)
            unfinished = unfinished & (chosen != self.eos).long()
            if not unfinished.any():
                break
            tokens = chosen[:, None]
        tokens_out = [_until_end(row, self.eos) for row in torch.stack(out, dim=1).tolist()]
        if scores_out is not None:
            per_step = torch.stack(scores_out, dim=1).tolist()
            scores_out[:] = [row[: len(tokens)] for row, tokens in zip(per_step, tokens_out)]
        return tokens_out

    def _beam_search(
        self, step: DecoderSteps, batch: int, beams: int, max_new: int, min_new: int, scores_out: list | None = None
    ) -> list[list[int]]:
        """transformers' `_beam_search` (5.x, one end-of-sentence token, no sampling), step for step."""
        device = step.device
        keep = 2 * beams  # candidates kept per sentence: enough for `beams` that do not end here
        top_mask = torch.arange(keep, device=device) < beams
        offsets = torch.arange(batch, device=device)[:, None] * beams
        running = torch.full((batch, beams, max_new), self.pad, dtype=torch.long, device=device)
        running_scores = torch.zeros((batch, beams), device=device)
        running_scores[:, 1:] = _FINISHED  # only the first beam's continuations count at first
        finished = running.clone()
        finished_scores = torch.full((batch, beams), _FINISHED, device=device)
        is_finished = torch.zeros((batch, beams), dtype=torch.bool, device=device)
        improvable = torch.ones((batch, 1), dtype=torch.bool, device=device)
        last = torch.full((batch * beams, 1), self.start, dtype=torch.long, device=device)
        for new in range(max_new):
            log_probs = step(last)
            torch._log_softmax(log_probs, -1, False, out=log_probs)
            self._apply_rules(log_probs, new, min_new, max_new)
            if self.renormalize:
                torch._log_softmax(log_probs, -1, False, out=log_probs)
            # Each beam's best `keep` tokens, then the sentence's best `keep` of those, by accumulated score.
            row_best, row_tokens = torch.topk(log_probs, keep, dim=-1)
            del log_probs
            accumulated = (row_best.view(batch, beams, keep) + running_scores[:, :, None]).view(batch, -1)
            top_scores, flat = torch.topk(accumulated, keep, dim=-1)
            source_beam = flat // keep
            top_tokens = row_tokens.view(batch, -1).gather(1, flat)
            top_sequences = running.gather(1, source_beam[:, :, None].expand(-1, -1, max_new))
            top_sequences[:, :, new] = top_tokens
            ends = (top_tokens == self.eos) | (new + 1 >= max_new)

            # The best `beams` candidates that did not end keep running.
            still_running = top_scores + ends.to(torch.float32) * _FINISHED
            chosen = torch.topk(still_running, beams, dim=-1)[1]
            running = top_sequences.gather(1, chosen[:, :, None].expand(-1, -1, max_new))
            running_scores = still_running.gather(1, chosen)
            rows = (source_beam.gather(1, chosen) + offsets).view(-1)

            # Candidates that ended among the best `beams` join the finished ones if they score higher.
            just_finished = ends & top_mask[None, :]
            ended_scores = top_scores / ((new + 1) ** self.length_penalty)
            full = torch.all(is_finished, dim=-1, keepdim=True) & (self.early_stopping is True)
            ended_scores += full.to(torch.float32) * _FINISHED
            ended_scores += (~improvable).to(torch.float32) * _FINISHED
            ended_scores += (~just_finished) * _FINISHED
            merged_scores = torch.cat((finished_scores, ended_scores), dim=1)
            best = torch.topk(merged_scores, beams, dim=-1)[1]
            finished = torch.cat((finished, top_sequences), dim=1).gather(1, best[:, :, None].expand(-1, -1, max_new))
            finished_scores = merged_scores.gather(1, best)
            is_finished = torch.cat((is_finished, just_finished), dim=1).gather(1, best)

            improvable = self._still_improvable(
                improvable, running_scores, finished_scores, is_finished, new + 1, max_new
            )
            stop_early = torch.all(is_finished) & (self.early_stopping is True)
            if not (improvable.any() and not stop_early and not ends.all()):
                break
            step.keep_rows(rows)
            last = running[:, :, new].reshape(-1, 1)
        if scores_out is not None:
            scores_out[:] = finished_scores[:, 0].tolist()
        return [_until_end(row, self.eos) for row in finished[:, 0].tolist()]

    def _still_improvable(
        self,
        improvable: torch.Tensor,
        running_scores: torch.Tensor,
        finished_scores: torch.Tensor,
        is_finished: torch.Tensor,
        generated: int,
        max_new: int,
    ) -> torch.Tensor:
        """transformers' early-stop heuristic: can a running beam still beat the worst finished one?"""
        if self.early_stopping == "never" and self.length_penalty > 0.0:
            length = max_new
        else:
            length = generated
        best_running = running_scores[:, :1] / (length**self.length_penalty)
        worst_finished = torch.where(is_finished, torch.min(finished_scores, dim=1, keepdim=True)[0], _FINISHED)
        return improvable & torch.any(best_running > worst_finished, dim=-1, keepdim=True)


def unsupported(model: Any) -> list[str]:
    """Why this loop cannot give the model's tokens: the generation-config fields (with their values) that
    hold something other than transformers' default and that it does not reproduce; empty when it can."""
    config: GenerationConfig = model.generation_config
    if not getattr(model.config, "is_encoder_decoder", False):
        return ["a decoder-only model"]
    found = []
    for name, value in config.to_dict().items():
        if name in _REPRODUCED or name in _NO_EFFECT or (name in _SAMPLING_ONLY and not config.do_sample):
            continue
        if not _is_default(name, value):
            found.append(f"{name}={value!r}")
    if config.do_sample:
        found.append("do_sample=True")
    eos, forced, bad_words = _ids(config.eos_token_id), _ids(config.forced_eos_token_id), config.bad_words_ids or []
    if len(eos) != 1:
        found.append(f"eos_token_id={config.eos_token_id!r} (one end token only)")
    if len(forced) > 1:
        found.append(f"forced_eos_token_id={config.forced_eos_token_id!r} (one token only)")
    if any(len(words) != 1 for words in bad_words):
        found.append(f"bad_words_ids={bad_words!r} (single tokens only)")
    for name in ("decoder_start_token_id", "pad_token_id"):
        if getattr(config, name) is None:
            found.append(f"{name}=None")
    return found


def _defaults() -> dict[str, Any]:
    """transformers' value for each field when a config leaves it out (4.x: GenerationConfig()'s own values;
    5.x: None there, the values generate() then applies in `_get_default_generation_params`)."""
    defaults = GenerationConfig().to_dict()
    applied = getattr(GenerationConfig, "_get_default_generation_params", None)
    if callable(applied):
        defaults.update({k: v for k, v in applied().items() if defaults.get(k) is None})
    return defaults


_DEFAULTS = _defaults()


def _is_default(name: str, value: Any) -> bool:
    """The value transformers uses when the field is left out (None, and False for an off switch, count too)."""
    default = _DEFAULTS.get(name)
    return value is None or value == default or (default is None and value is False)


def _ids(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


def _until_end(tokens: Sequence[int], eos: int) -> list[int]:
    out = []
    for token in tokens:
        out.append(token)
        if token == eos:
            break
    return out
