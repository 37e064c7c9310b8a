"""Sentences in, translations out: the engine's batch call as one function of texts (list[str] -> list[str]),
for benchmarks and tests that call it outside a round's planned batches (e.g. with
shared.text.term_protection.translate_with_glossary; a worker's pass batches a glossary's sentences with the
others: worker.translation.round.batch_plan)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from worker.translation.model.batching import plan_batches

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine


def translate_texts(engine: TranslationEngine, texts: Sequence[str]) -> list[str]:
    """Each text translated: a long one in pieces of the model's input length joined with spaces, the pieces
    in batches within the engine's budget (as a round plans them)."""
    pieces = [(n, chunk) for n, ids in enumerate(engine.token_ids(texts)) for chunk in engine.chunks(ids)]
    outputs = [""] * len(pieces)
    rows, tokens = engine.batch_budget()
    for batch in plan_batches([len(chunk) for _, chunk in pieces], tokens, rows):
        for i, text in zip(batch, engine.translate_ids([pieces[i][1] for i in batch])):
            outputs[i] = text
    joined: list[list[str]] = [[] for _ in texts]
    for (n, _), text in zip(pieces, outputs):
        joined[n].append(text)
    return [" ".join(" ".join(parts).split()) for parts in joined]
