"""A pass's plan: every untranslated sentence of the round's active jobs once, cut into the pieces the model
takes (a long sentence has several), grouped into batches under the engine's budget (length-sorted, see
worker.translation.model.batching.plan_batches) and put in the order they run: those holding sentences of the `first`
jobs first, then shortest job first (a batch that completes a job with few sentences left runs before one
that only advances a big job, so a one-sentence job sharing a round with a big one is not last)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from worker.translation.model.batching import plan_batches
from worker.translation.round.job_work import JobWork

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine


@dataclass(frozen=True)
class Piece:
    sentence: int  # index into BatchPlan.sentences
    part: int  # its place among its sentence's pieces
    ids: list[int]  # source token ids


@dataclass
class BatchPlan:
    sentences: list[str]  # each untranslated sentence once
    places: dict[str, list[tuple[str, int]]]  # sentence -> (job id, sentence index) of every job needing it
    pieces: list[Piece]
    batches: list[list[int]]  # indices into `pieces`, in the order they run
    rows: int  # most sentences per batch
    outputs: list[list[str | None]]  # each sentence's translated pieces so far
    confidences: list[list[float]]  # each sentence's pieces' scores so far (worker.translation.model.confidence)

    @classmethod
    def make(cls, engine: TranslationEngine, active: dict[str, JobWork], first: frozenset[str]) -> BatchPlan:
        places: dict[str, list[tuple[str, int]]] = {}
        for work in active.values():
            for i, (sentence, translation) in enumerate(zip(work.sentences, work.translations)):
                if translation is None:
                    places.setdefault(sentence, []).append((work.job.id, i))
        sentences = list(places)
        pieces = [
            Piece(s, c, chunk)
            for s, ids in enumerate(engine.token_ids(sentences))
            for c, chunk in enumerate(engine.chunks(ids))
        ]
        rows, tokens = engine.batch_budget()
        outputs: list[list[str | None]] = [[] for _ in sentences]
        for piece in pieces:
            outputs[piece.sentence].append(None)
        plan = cls(sentences, places, pieces, [], rows, outputs, [[] for _ in sentences])
        plan.batches = plan_batches(plan.lengths, tokens, rows)

        def order(batch: list[int]) -> tuple[bool, int]:
            jobs = plan.jobs_of(batch)
            return (not jobs & first, min(active[j].remaining for j in jobs))

        plan.batches.sort(key=order)
        return plan

    @property
    def lengths(self) -> list[int]:
        return [len(piece.ids) for piece in self.pieces]

    def jobs_of(self, units: Iterable[int]) -> set[str]:
        """The jobs that need any of these pieces."""
        return {job_id for u in units for job_id, _ in self.places[self.sentences[self.pieces[u].sentence]]}

    def still_needed(self, batch: list[int], active: dict[str, JobWork]) -> list[int]:
        """The batch's pieces that an active job still needs (its jobs may have been cancelled or failed)."""
        return [u for u in batch if self.jobs_of([u]) & active.keys()]

    def texts(self, units: list[int]) -> list[str]:
        """The sentences of these pieces (for the test hooks)."""
        return [self.sentences[self.pieces[u].sentence] for u in units]

    def ids(self, units: list[int]) -> list[list[int]]:
        return [self.pieces[u].ids for u in units]

    def keep(self, units: list[int], texts: list[str], scores: list[float] | None = None) -> None:
        """The model's output for these pieces, and its confidence in each when it was asked for."""
        for n, (u, text) in enumerate(zip(units, texts, strict=True)):
            self.outputs[self.pieces[u].sentence][self.pieces[u].part] = text
            if scores is not None:
                self.confidences[self.pieces[u].sentence].append(scores[n])

    def finished(self, batch: list[int]) -> dict[str, str]:
        """The batch's sentences whose every piece is translated, with their translations."""
        done: dict[str, str] = {}
        for u in batch:
            pieces = self.outputs[self.pieces[u].sentence]
            if all(p is not None for p in pieces):
                done[self.sentences[self.pieces[u].sentence]] = " ".join(p for p in pieces if p)
        return done

    def finished_scores(self, batch: list[int]) -> dict[str, float]:
        """The scores of the batch's finished sentences: a sentence of several pieces gets their mean."""
        done: dict[str, float] = {}
        for u in batch:
            index = self.pieces[u].sentence
            pieces, scores = self.outputs[index], self.confidences[index]
            if all(p is not None for p in pieces) and len(scores) == len(pieces):  # every piece scored
                done[self.sentences[index]] = sum(scores) / len(scores)
        return done
