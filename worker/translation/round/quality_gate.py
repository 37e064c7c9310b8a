"""The quality gate (docs/api.md, "Quality gate"): a sentence whose confidence (worker.translation.model.confidence)
is under the `min_confidence` of a job that needs it is made again once with a wider beam, and the better-scored
of its two translations is kept; a job then flags a sentence still under its own threshold `low_confidence`,
or, with `on_low_confidence: "withhold"`, returns its source untranslated.

Only a sentence the model translated whole is retried: its plain text, or its placeholder form (its protected
terms restored after, shared.text.term_protection); one translated in pieces between its terms keeps its
translation (its terms are right whatever the beam)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from shared.memory import probe_memory
from shared.text.term_protection import restore
from worker.translation.model.batching import fit_to_memory, plan_batches
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.job_work import JobWork

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

log = logging.getLogger(__name__)


def wider_beam(engine: TranslationEngine) -> int:
    """The retry's beam: twice the route's, at least 4."""
    return max(4, 2 * engine.num_beams)


def gate_of(plan: BatchPlan, active: dict[str, JobWork], e: int) -> float | None:
    """The strictest min_confidence of the active jobs needing an entry (None: none of them is gated)."""
    gates = [active[j].min_confidence for j, _ in plan.entries[e].places if j in active]
    return max((g for g in gates if g is not None), default=None)


def retry_low(
    engine: TranslationEngine,
    plan: BatchPlan,
    active: dict[str, JobWork],
    finished: dict[int, str],
    scores: dict[int, float],
) -> set[int]:
    """Make the finished entries scored under their gate again with a wider beam, keeping in `finished` and
    `scores` whichever translation scores higher; the entries made again."""
    low = []
    for e in finished:
        gate, score, protection = gate_of(plan, active, e), scores.get(e), plan.entries[e].protection
        if gate is not None and score is not None and score < gate and (protection is None or protection.parts is None):
            low.append(e)
    if not low:
        return set()
    texts = [plan.entries[e].protection.text if plan.entries[e].protection else plan.entries[e].sentence for e in low]  # type: ignore[union-attr]
    again, again_scores = translate_wider(engine, texts)
    for e, translation, score in zip(low, again, again_scores):
        protection = plan.entries[e].protection
        restored = restore(translation, protection.slots) if protection else translation
        if restored is not None and score > scores[e]:
            finished[e], scores[e] = restored, score
    made = {e for e, score in zip(low, again_scores) if score != float("-inf")}  # (not: too big for free memory)
    log.info(
        "quality gate: %d sentence(s) under their min_confidence made again at beam %d", len(made), wider_beam(engine)
    )
    return made


def translate_wider(engine: TranslationEngine, texts: list[str]) -> tuple[list[str], list[float]]:
    """Each text translated at the wider beam, piece by piece (a long one is cut as a pass cuts it), with its
    confidence (the mean of its pieces'); batches sized for the wider beam's rows and split to fit in free memory
    as a pass's are (TRANSQ_MEMORY_HEADROOM_MB). A piece that does not fit even alone is not made again: its text
    scores -inf, so the first translation is kept (the retry is a second chance, never a reason to fail a job)."""
    beams = wider_beam(engine)
    pieces = [(n, chunk) for n, ids in enumerate(engine.token_ids(texts)) for chunk in engine.chunks(ids)]
    lengths = [len(c) for _, c in pieces]
    rows, tokens = engine.batch_budget()
    shrink = max(1, beams // max(1, engine.num_beams))
    out: list[str] = [""] * len(pieces)
    confidences: list[float] = [float("-inf")] * len(pieces)
    settings = engine.settings
    available = probe_memory(settings.cgroup_root).available_bytes - settings.memory_headroom_mb * 2**20
    for batch in plan_batches(lengths, max(1, tokens // shrink), max(1, rows // shrink)):
        parts, too_big = fit_to_memory(
            batch, lengths, available, lambda size, longest: engine.estimate_batch_bytes(size, longest, beams)
        )
        if too_big:
            log.warning("quality gate: %d piece(s) too big for free memory at beam %d kept as made", len(too_big), beams)
        for part in parts:
            found: list[float] = []
            translated = engine.translate_ids([pieces[i][1] for i in part], scores=found, num_beams=beams)
            for i, text, score in zip(part, translated, found):
                out[i], confidences[i] = text, score
    joined: list[list[str]] = [[] for _ in texts]
    scored: list[list[float]] = [[] for _ in texts]
    for (n, _), text, score in zip(pieces, out, confidences):
        joined[n].append(text)
        scored[n].append(score)
    return [" ".join(" ".join(parts).split()) for parts in joined], [sum(s) / len(s) if s else 0.0 for s in scored]
