"""Degenerate translations: a loop (a phrase over and over, or mostly repeats) or a length far out of
proportion to the source. Such a translation is made again once with repeats banned and its length
capped; the job says so in its `warnings` either way, and one that is still degenerate is not cached."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from worker.translation.model.repeats import loop

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

log = logging.getLogger(__name__)

# Scripts written without spaces count each character as a word.
_UNSPACED = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"  # kana, CJK, hangul
_WORD = re.compile(rf"[{_UNSPACED}]|[^\s{_UNSPACED}]+")
LENGTH_FACTOR, LENGTH_SLACK = 3, 8  # more than 3x the source's words + 8 is far out of range


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def problem(source: str, translation: str) -> str | None:
    """Why the translation looks degenerate ("repeats a phrase", "is mostly repeats", "is too long for
    its source"; see worker.translation.model.repeats for what counts as a loop), or None."""
    looped = loop(source, translation)
    if looped:
        return looped
    if len(words(translation)) > LENGTH_FACTOR * len(words(source)) + LENGTH_SLACK:
        return "is too long for its source"
    return None


def guard(engine: TranslationEngine, finished: dict[str, str]) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """Check new translations (sentence -> translation, replaced in place when made again). Returns the
    warning of each sentence that needed it and the sentences still degenerate (not to be cached)."""
    warnings: dict[str, dict[str, Any]] = {}
    still_bad: set[str] = set()
    problems = {sentence: why for sentence, translation in finished.items() if (why := problem(sentence, translation))}
    if not problems:
        return warnings, still_bad
    # torch is imported here, where a model runs: the worker's main process imports this module, never torch.
    from worker.translation.model.guarded_retry import translate_guarded

    # All of them again in one batched call, not sentence by sentence.
    for (sentence, why), again in zip(problems.items(), translate_guarded(engine, list(problems))):
        after = problem(sentence, again)
        finished[sentence] = again
        message = f"the translation {why}: it was made again with repeated phrases banned and its length capped"
        if after:
            message += f", and it still {after}"
            still_bad.add(sentence)
        warnings[sentence] = {"code": "degenerate_output", "message": message}
        log.warning(
            "degenerate translation of a %d-character sentence (%s); retried: %s", len(sentence), why, after or "fine"
        )
    return warnings, still_bad
