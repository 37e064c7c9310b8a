"""After each batch: the finished sentences go to the sentence cache (a glossary's under its own namespace) and
to every active job that needs them (with the output guard's warnings), complete jobs are finished and the
others' progress saved; and, before each batch, jobs no longer running (cancelled, failed by another path)
leave the pass."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from shared.store.job_status import JobStatus
from shared.store.sentence_cache import SentenceCache, glossary_namespace
from shared.text.fidelity import check, flag
from worker.translation.liveness.broker_health import RetryingStore
from worker.translation.model.output_guard import guard
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.job_outcomes import Outcomes, finish, save_progress
from worker.translation.round.job_work import JobWork
from worker.translation.round.quality_gate import gate_of, retry_low

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

log = logging.getLogger(__name__)


def record(
    engine: TranslationEngine,
    output_guard: bool,
    cache: SentenceCache,
    namespace: str,
    out: Outcomes,
    plan: BatchPlan,
    active: dict[str, JobWork],
    finished: dict[int, str],
    scores: dict[int, float],
    untranslated: re.Pattern[str] | None = None,
) -> None:
    """Cache the plan's newly translated entries (`finished`, entry index -> translation) with their scores
    (under the model's `namespace`; a glossary's, under its own: shared.store.sentence_cache.glossary_namespace),
    record progress (with the translations, scores and fidelity records, see JobStore.set_progress), finish
    complete jobs. First those under a job's quality gate are made again with a wider beam
    (worker.translation.round.quality_gate), then, with `output_guard`, degenerate plain translations
    (worker.translation.model.output_guard); each is checked (shared.text.fidelity, `untranslated`: the
    pair's source-script characters). Only what passed its jobs' gates is cached."""
    if not finished:
        return
    entries = plan.entries
    retried = retry_low(engine, plan, active, finished, scores)
    plain = {entries[e].sentence: t for e, t in finished.items() if not entries[e].glossary}
    warnings, still_bad = guard(engine, plain) if output_guard and plain else ({}, set())
    translations = {e: plain[entries[e].sentence] if not entries[e].glossary else t for e, t in finished.items()}
    low = {e for e in finished if (gate := gate_of(plan, active, e)) is not None and scores.get(e, 0.0) < gate}
    by_namespace: dict[str, tuple[dict[str, str], dict[str, float]]] = {}
    for e, translation in translations.items():
        sentence, digest = entries[e].sentence, entries[e].glossary
        if e in low or sentence in still_bad and not digest:
            continue
        space = by_namespace.setdefault(glossary_namespace(namespace, digest) if digest else namespace, ({}, {}))
        space[0][sentence] = translation
        if e in scores and (digest or sentence not in warnings):
            space[1][sentence] = scores[e]
    for space, (kept, kept_scores) in by_namespace.items():
        cache.put_many(space, kept, kept_scores)
    counts = {"sentences_translated": len(finished), "degenerate_translations": len(warnings)}
    counts.update(gate_retried=len(retried), gate_low_confidence=0, gate_withheld=0)
    touched = set()
    for e, translation in translations.items():
        entry = entries[e]
        warning = None if entry.glossary else warnings.get(entry.sentence)
        checked = sentence_record(plan, e, translation, untranslated)
        checked["retried"] = [why for why, yes in (("degenerate", warning), ("low_confidence", e in retried)) if yes]
        if not entry.glossary and entry.sentence in still_bad:
            flag(checked, "degenerate")
        count_record(counts, checked)
        for job_id, index in entry.places:
            if job_id in active:
                work = active[job_id]
                work.scores[index] = score = None if warning else scores.get(e)
                work.translations[index], work.fidelity[index] = gated(
                    work, entry.sentence, translation, score, checked
                )
                judged = work.fidelity[index] or {}
                counts["gate_low_confidence"] += "low_confidence" in judged.get("flags", [])
                counts["gate_withheld"] += bool(judged.get("withheld"))
                if warning:
                    work.warn(index, warning)
                touched.add(job_id)
    out.stats.add({name: count for name, count in counts.items() if count})
    for job_id in touched:
        work = active[job_id]
        if work.complete:
            finish(out, work)
            active.pop(job_id)
        elif not save_progress(out, work):
            active.pop(job_id)


def sentence_record(plan: BatchPlan, e: int, translation: str, untranslated: re.Pattern[str] | None) -> dict[str, Any]:
    """An entry's fidelity record as the check finds it (shared.text.fidelity.check); its spans counted as
    repaired when its placeholders were lost and they were inserted verbatim between translated pieces."""
    entry = plan.entries[e]
    allowed = [slot.target for slot in entry.protection.slots] if entry.protection else []
    checked = check(entry.sentence, translation, untranslated, allowed)
    if entry.protection is not None and entry.protection.parts is not None and checked.get("kept"):
        checked["repaired"] = checked["kept"]
    return checked


def gated(
    work: JobWork, sentence: str, translation: str, score: float | None, checked: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The job's translation of a sentence and its record, once its own quality gate has judged the score: still
    under its min_confidence, flagged `low_confidence`, and with on_low_confidence "withhold" its source."""
    record = {key: value for key, value in checked.items() if value}
    if work.min_confidence is None or score is None or score >= work.min_confidence:
        return translation, record
    flag(record, "low_confidence")
    if not work.job.withhold:
        return translation, record
    return sentence, {**record, "withheld": True}


def count_record(counts: dict[str, int], checked: dict[str, Any]) -> None:
    """A translated sentence's record in the fidelity counters (/metrics: transq_fidelity_*)."""
    counts["fidelity_sentences"] = counts.get("fidelity_sentences", 0) + 1
    for key in ("kept", "repaired"):
        counts[f"fidelity_spans_{key}"] = counts.get(f"fidelity_spans_{key}", 0) + checked.get(key, 0)
    for code in checked.get("flags", []):
        counts[f"fidelity_flag:{code}"] = counts.get(f"fidelity_flag:{code}", 0) + 1


def drop_stopped(store: RetryingStore, active: dict[str, JobWork]) -> None:
    """Jobs no longer running (cancelled meanwhile) leave `active`: their remaining sentences are dropped."""
    if not active:
        return
    ids = list(active)
    for job_id, status in zip(ids, store.statuses(ids)):
        if status != JobStatus.RUNNING:
            log.info(
                "job %s is %s: its remaining sentences are dropped", job_id, status or "gone", extra={"job_id": job_id}
            )
            active.pop(job_id)
