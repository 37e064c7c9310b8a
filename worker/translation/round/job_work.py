"""One claimed job while its sentences are translated (JobWork): loading it and filling it from what is already
translated (WorkLoader; its outcome is stored by worker.translation.round.job_outcomes)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import redis

from shared.store.job_record import Job
from shared.store.memory_store import MemoryStore
from shared.store.sentence_cache import Question, SentenceCache, normalise
from shared.store.stats import Stats
from shared.text.fidelity import check, untranslated_pattern
from shared.text.glossary import Glossary
from shared.text.splitter import Segment, join_translations, segments_at, sentences, split_text
from worker.translation.liveness.broker_health import RetryingStore
from worker.translation.round.claims import Claims

log = logging.getLogger(__name__)


@dataclass
class JobWork:
    """A claimed job while its sentences are translated."""

    job: Job
    fence: int  # its claim's (Claims.claim): every write for the job carries it
    segments: list[list[Segment]]
    sentences: list[str]
    translations: list[str | None]
    scores: list[
        float | None
    ]  # each translated sentence's confidence, where known (worker.translation.model.confidence)
    cached: int = 0
    saved: set[int] = field(default_factory=set)  # indices whose translation is in the partial hash
    warnings: list[dict[str, Any]] = field(default_factory=list)  # as stored with the job
    warnings_saved: bool = True
    glossary: Glossary | None = None  # its terms (shared.text.glossary): matched sentences go through term protection
    suggestions: list[dict[str, Any]] = field(default_factory=list)  # its memories' fuzzy matches, per sentence
    fidelity: list[dict[str, Any] | None] = field(default_factory=list)  # each translated sentence's record
    min_confidence: float | None = None  # its quality gate's (its own, or TRANSQ_MIN_CONFIDENCE's; None: off)

    def __post_init__(self) -> None:
        self.fidelity = self.fidelity or [None] * len(self.sentences)

    @property
    def done(self) -> int:
        return sum(t is not None for t in self.translations)

    @property
    def complete(self) -> bool:
        return all(t is not None for t in self.translations)

    @property
    def remaining(self) -> int:
        return len(self.translations) - self.done

    def unsaved(self) -> dict[int, str]:
        """Translations not yet recorded with the job's progress; they count as saved from now."""
        new = {i: t for i, t in enumerate(self.translations) if t is not None and i not in self.saved}
        self.saved.update(new)
        return new

    def unsaved_scores(self, new: dict[int, str]) -> dict[int, float] | None:
        """The known scores of these new translations, when the job asked for scores (else None)."""
        if not self.job.want_scores:
            return None
        return {i: score for i in new if (score := self.scores[i]) is not None}

    def unsaved_fidelity(self, new: dict[int, str]) -> dict[int, dict[str, Any]]:
        """The fidelity records of these new translations."""
        return {i: record for i in new if (record := self.fidelity[i]) is not None}

    def warn(self, index: int, warning: dict[str, Any]) -> None:
        self.warnings.append({**warning, "sentence": index})
        self.warnings_saved = False

    def unsaved_warnings(self) -> list[dict[str, Any]] | None:
        """All the job's warnings when some are not yet stored with it, else None."""
        if self.warnings_saved:
            return None
        self.warnings_saved = True
        return self.warnings

    def assemble(self) -> list[str]:
        return [join_translations(segs, part) for segs, part in zip(self.segments, self._per_text(self.translations))]

    def assemble_scores(self) -> list[list[float | None]] | None:
        """Each text's sentences' scores, in order, when the job asked for them (else None)."""
        return self._per_text(self.scores) if self.job.want_scores else None

    def assemble_fidelity(self) -> list[list[dict[str, Any]]]:
        """Each text's sentences' fidelity records, in order ({} for one without)."""
        return self._per_text([record or {} for record in self.fidelity])

    def _per_text(self, values: list[Any]) -> list[list[Any]]:
        out, position = [], 0
        for segs in self.segments:
            count = sum(s.translate for s in segs)
            out.append(values[position : position + count])
            position += count
        return out


class WorkLoader:
    """Loads claimed jobs for a round, made once per process (once the model is loaded: the sentence cache is
    read under its `namespace`)."""

    def __init__(
        self,
        store: RetryingStore,
        claims: Claims,
        cache: SentenceCache,
        namespace: str,
        stats: Stats,
        max_sentence_chars: int,
        min_confidence: float = float("-inf"),
        pair: tuple[str, str] = ("", ""),
        memories: MemoryStore | None = None,
        fuzzy_max_sentences: int = 0,
    ):
        self.store, self.claims, self.cache, self.namespace, self.stats = store, claims, cache, namespace, stats
        self.max_sentence_chars, self.min_confidence = max_sentence_chars, min_confidence
        self.untranslated = untranslated_pattern(*pair)  # for the fidelity check of cached translations
        self.memories, self.fuzzy_max_sentences = memories, fuzzy_max_sentences

    def segments(self, job: Job) -> list[list[Segment]]:
        """Each text's segments, as the API (or the document stage) split it: the job's stored spans. A job
        stored without them (by an API older than the spans) is split here."""
        if len(job.spans) == len(job.texts):
            return [segments_at(text, spans) for text, spans in zip(job.texts, job.spans)]
        return [split_text(text, self.max_sentence_chars) for text in job.texts]

    def load(self, job_ids: list[str]) -> list[JobWork]:
        """The claimed jobs, split into sentences, with the translations they already have (their own
        partial results first, then the sentence cache)."""
        jobs = self.store.get_many(job_ids)
        partials = self.claims.store.partial_progress(job_ids)
        records = self.claims.store.partial_fidelity(job_ids)
        works = []
        for job, (partial, partial_scores), checked in zip(jobs, partials, records):
            if job is None:
                continue
            # (its partial hash may hold the sentences the cache answered at submission, as it does then)
            if job.attempts == 1 and job.sentences_done == job.cached_sentences:
                self.stats.observe("queue_wait_seconds", max(0.0, time.time() - job.submitted))
            segments = self.segments(job)
            flat = [normalise(s) for segs in segments for s in sentences(segs)]
            # its memories' exact matches, found at submission (api.memories), before the cache
            remembered = job.memory.get("hits", {})
            translations: list[str | None] = [partial.get(i, remembered.get(str(i))) for i in range(len(flat))]
            # A resumed job's cache hits so far (the API's at submission too) were recorded with its progress.
            works.append(
                JobWork(
                    job,
                    self.claims.fence(job.id),
                    segments,
                    flat,
                    translations,
                    [partial_scores.get(i) for i in range(len(flat))],
                    cached=job.cached_sentences if partial else 0,
                    saved=set(partial),
                    warnings=list(job.warnings),
                    glossary=Glossary.of(job.glossary) if job.glossary else None,
                    fidelity=[checked.get(i) for i in range(len(flat))],
                    min_confidence=self.gate(job),
                )
            )
        self._fill_from_cache(works)
        for work in works:
            if work.job.memory and work.job.memory["threshold"] < 100:
                work.suggestions = self._suggestions(work)
        return works

    def gate(self, job: Job) -> float | None:
        """The job's quality gate: its own min_confidence, else TRANSQ_MIN_CONFIDENCE's (None: off)."""
        threshold = job.min_confidence if job.min_confidence is not None else self.min_confidence
        return None if threshold == float("-inf") else threshold

    def _suggestions(self, work: JobWork) -> list[dict[str, Any]]:
        """The fuzzy matches of the job's sentences its memories hold no exact match of (the first
        TRANSQ_MEMORY_FUZZY_MAX_SENTENCES of them): [{sentence, matches: [{source, target, score}]}]. Looked
        up here, off the API's request path; a broker error leaves the job without suggestions."""
        memory = work.job.memory
        wanted = [i for i in range(len(work.sentences)) if str(i) not in memory["hits"]][: self.fuzzy_max_sentences]
        if self.memories is None or not wanted:
            return []
        try:
            found = self.memories.suggestions(
                memory["owner"], memory["ids"], [work.sentences[i] for i in wanted], memory["threshold"]
            )
        except redis.RedisError as exc:
            log.warning(
                "job %s: no memory suggestions, the broker failed: %s", work.job.id, exc, extra={"job_id": work.job.id}
            )
            return []
        return [{"sentence": i, "matches": matches} for i, matches in zip(wanted, found) if matches]

    def _fill_from_cache(self, works: list[JobWork]) -> None:
        """Fill each job's untranslated sentences from the sentence cache (the one lookup the API and the
        document stage make too: SentenceCache.answers), each sentence asked once for the whole round."""
        missing = [w for w in works if not w.complete]
        todo = [[i for i, t in enumerate(w.translations) if t is None] for w in missing]
        questions = [
            Question(self.namespace, [w.sentences[i] for i in idx], w.glossary, w.job.want_scores, w.min_confidence)
            for w, idx in zip(missing, todo)
        ]
        hits = 0
        for work, idx, answer in zip(missing, todo, self.cache.answers(questions) if missing else []):
            for n, i in enumerate(idx):
                if answer.translations[n] is not None:
                    work.translations[i] = answer.translations[n]
                    work.scores[i] = answer.scores[n] if answer.scores else None
                    allowed = [target for _, target in work.glossary.terms] if work.glossary else []
                    work.fidelity[i] = check(work.sentences[i], str(work.translations[i]), self.untranslated, allowed)
                    work.cached += 1
                    hits += 1
        self.stats.add({"cache_hits": hits, "cache_misses": sum(len(idx) for idx in todo) - hits})
