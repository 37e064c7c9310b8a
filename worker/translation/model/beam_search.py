"""transformers' beam search (5.x, one end-of-sentence token, no sampling), step for step, over few rows.

Part of worker.translation.model.decoding's loops (see its docstring): the vocabulary-sized work is one in-place
log-softmax and one per-row top-k; a sentence whose best hypotheses can no longer change leaves the batch
and the decoder's caches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import torch

from worker.translation.model.fused_decoder import compacting_order

if TYPE_CHECKING:
    from worker.translation.model.generation_rules import GenerationRules, Rules

FINISHED = -1.0e9  # transformers' score for "not a candidate"


def beam_search(
    decoder: GenerationRules,
    step: Any,
    batch: int,
    beams: int,
    limit: torch.Tensor,
    min_new: int,
    rules: Rules,
    scores_out: list | None,
) -> list[list[int]]:
    """transformers' `_beam_search` (5.x, one end-of-sentence token, no sampling), step for step; a
    sentence whose best hypotheses can no longer change leaves the batch and the caches."""
    device = step.device
    max_new = int(limit.max())
    limit = limit[:, None]  # sentences x 1
    keep = 2 * beams  # candidates kept per sentence: enough for `beams` that do not end here
    top_mask = torch.arange(keep, device=device) < beams
    running = torch.full((batch, beams, max_new), decoder.pad, dtype=torch.long, device=device)
    running_scores = torch.zeros((batch, beams), device=device)
    running_scores[:, 1:] = FINISHED  # only the first beam's continuations count at first
    finished = running.clone()
    finished_scores = torch.full((batch, beams), FINISHED, device=device)
    is_finished = torch.zeros((batch, beams), dtype=torch.bool, device=device)
    improvable = torch.ones((batch, 1), dtype=torch.bool, device=device)
    last = torch.full((batch * beams, 1), decoder.start, dtype=torch.long, device=device)
    active = torch.arange(batch)  # the sentence of each group of `beams` rows still in the batch
    results: list[list[int]] = [[] for _ in range(batch)]
    result_scores = [0.0] * batch
    for new in range(max_new):
        n = len(active)
        log_probs = step(last)
        torch._log_softmax(log_probs, -1, False, out=log_probs)
        at_limit = (limit == new + 1).repeat_interleave(beams, dim=0)[:, 0]
        history = lambda: [[decoder.start] + row for row in running[:, :, :new].reshape(n * beams, new).tolist()]  # noqa: B023
        decoder.apply_rules(log_probs, new, min_new, at_limit, rules, history)
        if decoder.renormalize:
            torch._log_softmax(log_probs, -1, False, out=log_probs)
        # Each beam's best `keep` tokens, then the sentence's best `keep` of those, by accumulated score.
        row_best, row_columns = torch.topk(log_probs, keep, dim=-1)
        del log_probs
        row_tokens = step.projection.tokens(row_columns)
        accumulated = (row_best.view(n, beams, keep) + running_scores[:, :, None]).view(n, -1)
        top_scores, flat = torch.topk(accumulated, keep, dim=-1)
        source_beam = flat // keep
        top_tokens = row_tokens.view(n, -1).gather(1, flat)
        top_sequences = running.gather(1, source_beam[:, :, None].expand(-1, -1, max_new))
        top_sequences[:, :, new] = top_tokens
        ends = (top_tokens == decoder.eos) | (new + 1 >= limit)

        # The best `beams` candidates that did not end keep running.
        still_running = top_scores + ends.to(torch.float32) * FINISHED
        chosen = torch.topk(still_running, beams, dim=-1)[1]
        running = top_sequences.gather(1, chosen[:, :, None].expand(-1, -1, max_new))
        running_scores = still_running.gather(1, chosen)
        rows = source_beam.gather(1, chosen) + torch.arange(n, device=device)[:, None] * beams

        # Candidates that ended among the best `beams` join the finished ones if they score higher.
        just_finished = ends & top_mask[None, :]
        ended_scores = top_scores / ((new + 1) ** decoder.length_penalty)
        full = torch.all(is_finished, dim=-1, keepdim=True) & (decoder.early_stopping is True)
        ended_scores += full.to(torch.float32) * FINISHED
        ended_scores += (~improvable).to(torch.float32) * FINISHED
        ended_scores += (~just_finished) * FINISHED
        merged_scores = torch.cat((finished_scores, ended_scores), dim=1)
        best = torch.topk(merged_scores, beams, dim=-1)[1]
        finished = torch.cat((finished, top_sequences), dim=1).gather(1, best[:, :, None].expand(-1, -1, max_new))
        finished_scores = merged_scores.gather(1, best)
        is_finished = torch.cat((is_finished, just_finished), dim=1).gather(1, best)

        improvable = _still_improvable(
            decoder, improvable, running_scores, finished_scores, is_finished, new + 1, limit
        )
        # A sentence whose finished hypotheses can no longer change is done (transformers keeps
        # computing it to the end of the batch; its result would be the same).
        done = ~improvable[:, 0]
        if decoder.early_stopping is True:
            done |= torch.all(is_finished, dim=-1)
        if bool(done.all()) or bool(ends.all()):
            break
        if bool(done.any()):
            _keep_results(decoder, done, active, finished, finished_scores, results, result_scores)
            stay = compacting_order(~done)
            running, running_scores, finished, finished_scores = (
                t[stay] for t in (running, running_scores, finished, finished_scores)
            )
            is_finished, improvable, active, limit = is_finished[stay], improvable[stay], active[stay], limit[stay]
            step.select_rows(rows[stay].view(-1))
        else:
            step.keep_rows(rows.view(-1))
        last = running[:, :, new].reshape(-1, 1)
    _keep_results(
        decoder, torch.ones(len(active), dtype=torch.bool), active, finished, finished_scores, results, result_scores
    )
    if scores_out is not None:
        scores_out[:] = result_scores
    return results


def _keep_results(
    decoder: GenerationRules,
    done: torch.Tensor,
    active: torch.Tensor,
    finished: torch.Tensor,
    finished_scores: torch.Tensor,
    results: list[list[int]],
    result_scores: list[float],
) -> None:
    """The best finished hypothesis of each done sentence, into its place in `results`."""
    index = done.nonzero()[:, 0]
    sentences = active[index].tolist()
    for sentence, tokens, score in zip(sentences, finished[index, 0].tolist(), finished_scores[index, 0].tolist()):
        results[sentence] = _until_end(tokens, decoder.eos)
        result_scores[sentence] = score


def _still_improvable(
    decoder: GenerationRules,
    improvable: torch.Tensor,
    running_scores: torch.Tensor,
    finished_scores: torch.Tensor,
    is_finished: torch.Tensor,
    generated: int,
    limit: torch.Tensor,
) -> torch.Tensor:
    """transformers' early-stop heuristic: can a running beam still beat the worst finished one?"""
    if decoder.early_stopping == "never" and decoder.length_penalty > 0.0:
        length: Any = limit.to(torch.float32)
    else:
        length = generated
    best_running = running_scores[:, :1] / (length**decoder.length_penalty)
    worst_finished = torch.where(is_finished, torch.min(finished_scores, dim=1, keepdim=True)[0], FINISHED)
    return improvable & torch.any(best_running > worst_finished, dim=-1, keepdim=True)


def _until_end(tokens: Sequence[int], eos: int) -> list[int]:
    out = []
    for token in tokens:
        out.append(token)
        if token == eos:
            break
    return out
