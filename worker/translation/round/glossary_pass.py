"""The sentences of a job with a glossary that one of its terms matches: translated through term protection
(shared.text.term_protection: the terms pass the model as placeholders, or the pieces between them are translated
apart), cached under the glossary's own namespace, recorded. The job's other sentences go to the planned
batches as any sentence does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.store.sentence_cache import SentenceCache, glossary_namespace
from shared.text.term_protection import translate_with_glossary
from worker.translation.model.text_batches import translate_texts
from worker.translation.round.job_outcomes import Outcomes, finish, save_progress
from worker.translation.round.job_work import JobWork

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine


def translate_glossary_sentences(
    engine: TranslationEngine, cache: SentenceCache, namespace: str, out: Outcomes, active: dict[str, JobWork]
) -> None:
    """Translate the matched sentences of every active job with a glossary (cached under the glossary's own
    namespace within the model's `namespace`); a job finished by them, or taken over meanwhile, leaves
    `active`."""
    for work in [w for w in active.values() if w.glossary is not None]:
        if not _translate_matched(engine, cache, namespace, out, work):
            active.pop(work.job.id)


def _translate_matched(
    engine: TranslationEngine, cache: SentenceCache, namespace: str, out: Outcomes, work: JobWork
) -> bool:
    glossary = work.glossary
    assert glossary is not None
    todo = [i for i, (s, t) in enumerate(zip(work.sentences, work.translations)) if t is None and glossary.found_in(s)]
    if not todo:
        return True
    sentences = [work.sentences[i] for i in todo]
    translations = translate_with_glossary(lambda texts: translate_texts(engine, texts), sentences, glossary)
    cache.put_many(glossary_namespace(namespace, glossary.digest), dict(zip(sentences, translations)))
    out.stats.incr("sentences_translated", len(set(sentences)))
    for i, translation in zip(todo, translations):
        work.translations[i] = translation
    if work.complete:
        finish(out, work)
        return False
    return save_progress(out, work)
