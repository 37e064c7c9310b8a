"""Each translation's confidence: the length-normalised log-probability of the chosen output.

Beam search: the beam's final score as transformers computes it (the sum of its tokens' log-probabilities
divided by its length to the power of the length penalty: generate()'s `sequences_scores`). Greedy: the
mean log-probability of the chosen tokens, end of sentence included, under the distribution the rules
left (banned tokens, forced end). Our decoding loop computes it as it goes (worker.translation.model.decoding,
`confidence`); this module computes it from generate()'s output where the engine falls back to it.
"""

from __future__ import annotations

from typing import Any

import torch


def generate_kwargs(wanted: bool) -> dict[str, bool]:
    """What generate() needs to report scores (nothing when they are not wanted)."""
    return {"output_scores": True, "return_dict_in_generate": True} if wanted else {}


def from_generate(model: Any, output: Any, num_beams: int, eos: int) -> list[float]:
    """Each sentence's confidence from generate(output_scores=True, return_dict_in_generate=True)'s output."""
    if num_beams > 1:
        return [float(s) for s in output.sequences_scores.tolist()]
    steps = model.compute_transition_scores(output.sequences, output.scores, normalize_logits=True)
    confidences = []
    for tokens, log_probs in zip(output.sequences[:, 1:].tolist(), steps.tolist()):
        length = tokens.index(eos) + 1 if eos in tokens else len(tokens)
        confidences.append(sum(log_probs[:length]) / max(length, 1))
    return confidences


def sequences(output: Any) -> torch.Tensor:
    """generate()'s token ids, whether it returned a tensor or a dictionary."""
    return output if isinstance(output, torch.Tensor) else output.sequences
