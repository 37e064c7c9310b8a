"""The sentences of a job with a glossary that one of its terms matches: translated through term protection
(shared.text.term_protection: the terms pass the model as placeholders, or the pieces between them are translated
apart), cached under the glossary's own namespace, recorded. The job's other sentences go to the planned
batches as any sentence does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.store.sentence_cache import glossary_namespace
from shared.text.term_protection import translate_with_glossary
from worker.translation.model.text_batches import translate_texts
from worker.translation.round.job_outcomes import finish, save_progress
from worker.translation.round.job_work import JobWork

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext


def translate_glossary_sentences(ctx: WorkerContext, active: dict[str, JobWork]) -> None:
    """Translate the matched sentences of every active job with a glossary; a job finished by them, or taken
    over meanwhile, leaves `active`."""
    for work in [w for w in active.values() if w.glossary is not None]:
        if not _translate_matched(ctx, work):
            active.pop(work.job.id)


def _translate_matched(ctx: WorkerContext, work: JobWork) -> bool:
    glossary = work.glossary
    assert glossary is not None
    todo = [i for i, (s, t) in enumerate(zip(work.sentences, work.translations)) if t is None and glossary.found_in(s)]
    if not todo:
        return True
    sentences = [work.sentences[i] for i in todo]
    translations = translate_with_glossary(lambda texts: translate_texts(ctx.engine, texts), sentences, glossary)
    ctx.cache.put_many(glossary_namespace(ctx.namespace, glossary.digest), dict(zip(sentences, translations)))
    ctx.stats.incr("sentences_translated", len(set(sentences)))
    for i, translation in zip(todo, translations):
        work.translations[i] = translation
    if work.complete:
        finish(ctx, work)
        return False
    return save_progress(ctx, work)
