"""Greedy and beam-search decoding for encoder-decoder models, with the vocabulary-sized work cut down.

transformers' `generate` spends a quarter of a CPU beam-search batch outside the model, on tensors of
rows x vocabulary (65,001 columns for opus-mt): a copy of the logits, `log_softmax` into a new tensor,
the beam scores added into another, and a top-k over all beams' vocabularies at once; three logits
processors each copied the scores again (the special-token rules). This loop gives exactly
transformers' tokens (tests/worker/translation/model/test_decoding.py compares them) and touches each row's vocabulary
twice: `log_softmax` in place, then a per-row top-k. The running beam score is the same for a whole
row, so a sentence's best 2K continuations are among its beams' best 2K tokens each: the scores are
added to those few candidates only, with the same float operations transformers uses.

It serves the generation configs it can reproduce (Marian's: single-token bad words, one end-of-
sentence token, forced end at the last step, length penalty, early stopping); `Decoder.for_model`
returns None for anything else, and the engine then calls `generate` as it is.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import torch
from transformers import GenerationConfig

from worker.translation.model.beam_search import beam_search
from worker.translation.model.decoder_steps import DecoderSteps
from worker.translation.model.encoding import encode
from worker.translation.model.fused_decoder import FusedSteps, compacting_order
from worker.translation.model.generation_config import ids as _ids
from worker.translation.model.generation_config import unsupported
from worker.translation.model.generation_rules import GenerationRules, Rules
from worker.translation.model.output_projection import OutputProjection
from worker.translation.model.row_top import argmax_rows


class Decoder(GenerationRules):
    """The generation rules of one model, and the loops that apply them."""

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
        projection: OutputProjection | None = None,
        no_repeat_ngram: int = 0,
        limits: Sequence[int] | None = None,
        confidence: list | None = None,
    ) -> list[list[int]]:
        """Each sentence's output tokens, up to and including its end of sentence. `interrupt` is asked
        before every decoding step; when it answers True the batch stops with BatchInterrupted. A `scores`
        list receives what generate() reports: each token's score (greedy), each sentence's (beam).
        `projection`: the output layer (default: the model's own, over the whole vocabulary).
        `no_repeat_ngram`: transformers' no_repeat_ngram_size (0: off). `limits`: each sentence's own
        max_new_tokens (its end is forced at its last step), at most `max_new_tokens`. A `confidence` list
        receives each sentence's length-normalised log-probability: the mean over its tokens (greedy), the
        beam's final score with the length penalty, as generate()'s `sequences_scores` (beam)."""
        hidden = encode(model, input_ids, attention_mask)
        limit = torch.tensor(
            [min(n, max_new_tokens) for n in limits] if limits else [max_new_tokens] * len(input_ids),
            device=hidden.device,
        )
        if FusedSteps.fits(model):
            step: Any = FusedSteps(model, hidden, attention_mask, int(limit.max()), interrupt, projection, num_beams)
        else:
            step = DecoderSteps(model, hidden, attention_mask, self.cache_argument, interrupt, projection, num_beams)
        rules = Rules.of(self, step.projection, no_repeat_ngram)
        if num_beams == 1:
            return self._greedy(step, len(input_ids), limit, min_new_tokens, rules, scores, confidence)
        wanted = scores if scores is not None else confidence
        out = beam_search(self, step, len(input_ids), num_beams, limit, min_new_tokens, rules, wanted)
        if confidence is not None and wanted is not confidence:
            confidence[:] = wanted or []
        return out

    def _greedy(
        self,
        step: Any,
        batch: int,
        limit: torch.Tensor,
        min_new: int,
        rules: Rules,
        scores_out: list | None,
        confidence: list | None,
    ) -> list[list[int]]:
        """Greedy search; a sentence leaves the batch (and the caches) at its end of sentence."""
        tokens = torch.full((batch, 1), self.start, dtype=torch.long, device=step.device)
        active = list(range(batch))  # the sentence of each row still in the batch
        out: list[list[int]] = [[] for _ in range(batch)]
        token_scores: list[list[float]] = [[] for _ in range(batch)]
        log_probs = [0.0] * batch  # each sentence's sum of its tokens' log-probabilities (for `confidence`)
        for new in range(int(limit.max())):
            scores = step(tokens)
            history = lambda: [[self.start] + out[row] for row in active]  # noqa: B023 - called at once
            self.apply_rules(scores, new, min_new, limit == new + 1, rules, history)
            columns = argmax_rows(scores)  # renormalizing would not move the argmax
            chosen = step.projection.tokens(columns)
            if scores_out is not None:
                scored = torch.log_softmax(scores, -1) if self.renormalize else scores
                for row, value in zip(active, scored.gather(1, columns[:, None])[:, 0].tolist()):
                    token_scores[row].append(value)
            if confidence is not None:
                chosen_log_probs = scores.gather(1, columns[:, None])[:, 0] - torch.logsumexp(scores, -1)
                for row, value in zip(active, chosen_log_probs.tolist()):
                    log_probs[row] += value
            for row, token in zip(active, chosen.tolist()):
                out[row].append(token)
            ended = chosen == self.eos
            if bool(ended.all()):
                break
            if bool(ended.any()):
                stay = compacting_order(~ended)
                step.select_rows(stay)
                active = [active[i] for i in stay.tolist()]
                chosen, limit = chosen[stay], limit[stay]
            tokens = chosen[:, None]
        if scores_out is not None:
            scores_out[:] = token_scores
        if confidence is not None:
            confidence[:] = [total / max(len(tokens), 1) for total, tokens in zip(log_probs, out)]
        return out
