"""A pass's plan: every untranslated sentence of the round's active jobs once (an entry), cut into the pieces the
model takes (a long sentence has several), grouped into batches under the engine's budget (length-sorted, see
worker.translation.model.batching.plan_batches) and put in the order they run: those holding sentences of the
`first` jobs first, then shortest job first (a batch that completes a job with few sentences left runs before one
that only advances a big job, so a one-sentence job sharing a round with a big one is not last).

A sentence a job's glossary term matches is an entry of its own (one per glossary), taken through term protection
(shared.text.term_protection.TermProtection): its pieces are those of its placeholder form, batched with all
the others; when a placeholder does not come back, the pieces between its terms are planned as follow-up
batches that run next, before the pass may stop at a slice end (so the work its batch began is not lost; a
batch holds no more glossary sentences than FOLLOW_UP_BATCHES batches of such pieces could need). A sentence of
terms only needs no model: it is `ready` from the start."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from shared.text.protected_spans import ProtectedTerms
from shared.text.term_protection import TermProtection
from worker.translation.model.batching import plan_batches
from worker.translation.round.job_work import JobWork

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

# A batch's glossary sentences need at most this many batches' rows of pieces between their terms (a sentence of
# more runs alone), so the follow-ups that run before a slice may end stay a few batches.
FOLLOW_UP_BATCHES = 4


@dataclass(frozen=True)
class Piece:
    entry: int  # index into BatchPlan.entries
    part: int  # its place among its entry's pieces (of its current stage)
    ids: list[int]  # source token ids


@dataclass
class Entry:
    """One untranslated sentence, as every job that needs it needs it: plainly, or through the term protection
    of the glossary whose digest is `glossary` (its translation is cached under that glossary's namespace)."""

    sentence: str
    glossary: str = ""  # the glossary's digest (shared.text.glossary.Glossary.digest); "": plain
    places: list[tuple[str, int]] = field(default_factory=list)  # (job id, sentence index) of each job needing it
    protection: TermProtection | None = None  # a glossary's term protection, under way
    input_of: list[int] = field(default_factory=list)  # which of its stage's model inputs each of its pieces is of
    outputs: list[str | None] = field(default_factory=list)  # each piece's translation so far
    confidences: list[float] = field(default_factory=list)  # each piece's score (worker.translation.model.confidence)

    def texts(self) -> list[str]:
        """What the model translates for it now."""
        return self.protection.inputs if self.protection else [self.sentence]

    def stage_outputs(self) -> list[str] | None:
        """The translation of each of its model inputs, once every piece of them is translated (else None)."""
        if any(output is None for output in self.outputs):
            return None
        pieces = [[str(o) for o, n in zip(self.outputs, self.input_of) if n == i] for i in range(len(self.texts()))]
        return [" ".join(" ".join(parts).split()) for parts in pieces]


@dataclass
class BatchPlan:
    engine: TranslationEngine
    entries: list[Entry]
    pieces: list[Piece]
    batches: list[list[int]]  # indices into `pieces`, in the order they run
    rows: int  # most sentences per batch
    follow_ups: int = 0  # how many of the first `batches` finish what a batch began (a glossary's second stage)
    ready: dict[int, str] = field(default_factory=dict)  # entries translated without the model

    @classmethod
    def make(
        cls, engine: TranslationEngine, active: dict[str, JobWork], first: frozenset[str], spans: bool = False
    ) -> BatchPlan:
        """With `spans`, every sentence's protected spans (shared.text.protected_spans) go through term protection
        too, with its glossary's terms where one matches."""
        keyed: dict[tuple[str, str], Entry] = {}
        for work in active.values():
            glossary, digest = work.glossary, work.glossary.digest if work.glossary else ""
            for i, (sentence, translation) in enumerate(zip(work.sentences, work.translations)):
                if translation is None:
                    matched = glossary if glossary is not None and glossary.found_in(sentence) else None
                    key = (digest if matched else "", sentence)
                    if key not in keyed:
                        terms = ProtectedTerms(matched) if spans else matched
                        found = terms is not None and (matched is not None or terms.found_in(sentence))
                        keyed[key] = Entry(
                            sentence, key[0], protection=TermProtection(terms, sentence) if found else None
                        )  # type: ignore[arg-type]
                    keyed[key].places.append((work.job.id, i))
        plan = cls(engine, list(keyed.values()), [], [], engine.batch_budget()[0])
        for e, entry in enumerate(plan.entries):
            if entry.protection and entry.protection.translation is not None:
                plan.ready[e] = entry.protection.translation
        plan.batches = plan.bounded(
            plan.plan(plan.add_pieces([e for e in range(len(plan.entries)) if e not in plan.ready]))
        )

        def order(batch: list[int]) -> tuple[bool, int]:
            jobs = plan.jobs_of(batch)
            return (not jobs & first, min(active[j].remaining for j in jobs))

        plan.batches.sort(key=order)
        return plan

    def add_pieces(self, entries: list[int]) -> list[int]:
        """Cut the model inputs of these entries' current stage into pieces; their indices in `pieces`."""
        texts = [(e, n, text) for e in entries for n, text in enumerate(self.entries[e].texts())]
        if not texts:
            return []
        start = len(self.pieces)
        for e in entries:
            entry = self.entries[e]
            entry.input_of, entry.outputs, entry.confidences = [], [], []
        for (e, n, _), ids in zip(texts, self.engine.token_ids([text for _, _, text in texts])):
            entry = self.entries[e]
            for chunk in self.engine.chunks(ids):
                self.pieces.append(Piece(e, len(entry.outputs), chunk))
                entry.input_of.append(n)
                entry.outputs.append(None)
        return list(range(start, len(self.pieces)))

    def plan(self, pieces: list[int]) -> list[list[int]]:
        """These pieces in batches under the engine's budget."""
        rows, tokens = self.engine.batch_budget()
        return [
            [pieces[i] for i in batch]
            for batch in plan_batches([len(self.pieces[u].ids) for u in pieces], tokens, rows)
        ]

    def bounded(self, batches: list[list[int]]) -> list[list[int]]:
        """The batches, each split where its glossary sentences could need more than FOLLOW_UP_BATCHES batches'
        rows of pieces between their terms."""
        cap, out = FOLLOW_UP_BATCHES * self.rows, []
        for batch in batches:
            out.append([])
            weight = 0
            for u in batch:
                protection, piece = self.entries[self.pieces[u].entry].protection, self.pieces[u]
                pieces = len(protection.slots) + 1 if protection and piece.part == 0 else 0  # at most
                if out[-1] and weight + pieces > cap:
                    out.append([])
                    weight = 0
                out[-1].append(u)
                weight += pieces
        return out

    def next_batch(self) -> tuple[list[int], bool]:
        """The next batch to run, and whether it is a follow-up (no slice may end before it)."""
        follow_up = self.follow_ups > 0
        self.follow_ups -= follow_up
        return self.batches.pop(0), follow_up

    @property
    def lengths(self) -> list[int]:
        return [len(piece.ids) for piece in self.pieces]

    def jobs_of(self, units: Iterable[int]) -> set[str]:
        """The jobs that need any of these pieces."""
        return {job_id for u in units for job_id, _ in self.entries[self.pieces[u].entry].places}

    def still_needed(self, batch: list[int], active: dict[str, JobWork]) -> list[int]:
        """The batch's pieces that an active job still needs (its jobs may have been cancelled or failed)."""
        return [u for u in batch if self.jobs_of([u]) & active.keys()]

    def texts(self, units: list[int]) -> list[str]:
        """The sentences of these pieces (for the test hooks)."""
        return [self.entries[self.pieces[u].entry].sentence for u in units]

    def ids(self, units: list[int]) -> list[list[int]]:
        return [self.pieces[u].ids for u in units]

    def keep(self, units: list[int], texts: list[str], scores: list[float] | None = None) -> None:
        """The model's output for these pieces, and its confidence in each when it was asked for."""
        for n, (u, text) in enumerate(zip(units, texts, strict=True)):
            entry = self.entries[self.pieces[u].entry]
            entry.outputs[self.pieces[u].part] = text
            if scores is not None:
                entry.confidences.append(scores[n])

    def finish(self, batch: list[int]) -> tuple[dict[int, str], dict[int, float]]:
        """The batch's entries now translated (entry index -> translation), and the scores of those that have
        one (a sentence of several pieces, or one translated between its protected terms, gets their mean; one
        of terms only, none). Those whose placeholders were lost get their pieces between the terms, as
        follow-up batches that run next."""
        done: dict[int, str] = {}
        scores: dict[int, float] = {}
        again: list[int] = []
        for e in dict.fromkeys(self.pieces[u].entry for u in batch):
            entry = self.entries[e]
            outputs = entry.stage_outputs()
            if outputs is None:
                continue  # its other pieces are in other batches
            if entry.protection is None:
                done[e] = " ".join(o for o in outputs if o)
                if len(entry.confidences) == len(entry.outputs):  # every piece scored
                    scores[e] = sum(entry.confidences) / len(entry.confidences)
                continue
            entry.protection.take(outputs)
            if entry.protection.translation is None:
                again.append(e)
            else:
                done[e] = entry.protection.translation
                if entry.confidences and len(entry.confidences) == len(entry.outputs):
                    scores[e] = sum(entry.confidences) / len(entry.confidences)
        follow_ups = self.plan(self.add_pieces(again))
        self.batches[:0] = follow_ups
        self.follow_ups += len(follow_ups)
        return done, scores
