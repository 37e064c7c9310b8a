"""Checking a sentence's translation against its source (docs/api.md, "Fidelity"): each protected span
(shared.text.protected_spans) must appear in it exactly as often as in the source, and a source written in a
script the target language does not use (Han for zh→en) must not leave text of that script in it.

A sentence's record is a small dict, its empty fields left out, kept with the job as its scores are:
`kept` (protected spans found as they should be), `repaired` (of those, how many were put back by inserting
them verbatim because the model lost their placeholders), `flags` (what is wrong with the translation:
FLAGS), `retried` (why it was made again: the output guard's "degenerate", the quality gate's
"low_confidence") and `withheld` (the quality gate returned the source untranslated). No torch: the API and
the document stage check cached answers with it too."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable, Sequence

from shared.text.protected_spans import spans_of

FLAGS = ("span_missing", "span_repeated", "untranslated", "degenerate", "low_confidence")

_SCRIPTS = {
    "han": r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",
    "kana": r"\u3040-\u30ff",
    "hangul": r"\uac00-\ud7af\u1100-\u11ff",
    "cyrillic": r"\u0400-\u04ff",
    "greek": r"\u0370-\u03ff",
    "arabic": r"\u0600-\u06ff",
    "hebrew": r"\u0590-\u05ff",
    "thai": r"\u0e00-\u0e7f",
    "devanagari": r"\u0900-\u097f",
}
# The scripts a language is written in, of those checked (a language not named here is written in Latin).
_LANGUAGE_SCRIPTS = {
    "zh": {"han"},
    "ja": {"han", "kana"},
    "ko": {"hangul", "han"},
    **{lang: {"cyrillic"} for lang in ("ru", "uk", "bg", "be", "sr", "mk", "kk")},
    "el": {"greek"},
    **{lang: {"arabic"} for lang in ("ar", "fa", "ur")},
    "he": {"hebrew"},
    "th": {"thai"},
    **{lang: {"devanagari"} for lang in ("hi", "mr", "ne")},
}


def untranslated_pattern(source_lang: str, target_lang: str) -> re.Pattern[str] | None:
    """Characters of the source's scripts that the target's do not use (None: nothing to check, e.g. from a
    language written in Latin)."""
    scripts = _LANGUAGE_SCRIPTS.get(source_lang, set()) - _LANGUAGE_SCRIPTS.get(target_lang, set())
    return re.compile("[" + "".join(_SCRIPTS[s] for s in sorted(scripts)) + "]") if scripts else None


def occurrences(span: str, text: str) -> int:
    """How often `span` stands in `text` on its own: not as part of a longer word or number (`3` is not in `30`)."""
    before = r"(?<![A-Za-z0-9_])" if span[0].isalnum() else ""
    after = r"(?![A-Za-z0-9]|[.,]\d)" if span[-1].isalnum() else ""
    return len(re.findall(before + re.escape(span) + after, text))


def check(
    source: str, translation: str, untranslated: re.Pattern[str] | None = None, allowed: Iterable[str] = ()
) -> dict[str, Any]:
    """The sentence's record (see the module's docstring) as the check alone finds it: `kept` and `flags`.
    `untranslated`: untranslated_pattern's for the job's pair; `allowed`: texts the translation may hold in
    the source's script (a glossary's target terms)."""
    record: dict[str, Any] = {}
    flags = []
    wanted = Counter(spans_of(source))
    kept = 0
    for span, count in wanted.items():
        found = occurrences(span, translation)
        kept += min(found, count)
        if found < count:
            flags.append("span_missing")
        elif found > count:
            flags.append("span_repeated")
    if untranslated is not None:
        rest = translation
        for text in [*wanted, *allowed]:
            rest = rest.replace(text, " ")
        if untranslated.search(rest):
            flags.append("untranslated")
    if kept:
        record["kept"] = kept
    if flags:
        record["flags"] = sorted(set(flags), key=FLAGS.index)
    return record


def flag(record: dict[str, Any], code: str) -> None:
    """Add a flag to a sentence's record."""
    record["flags"] = sorted({*record.get("flags", []), code}, key=FLAGS.index)


def summary(records: Sequence[Sequence[dict[str, Any] | None]]) -> dict[str, Any]:
    """A job's sentence records (per text) in brief: sentences checked, spans kept and repaired, sentences
    flagged and the count of each flag, sentences retried by the output guard and withheld."""
    flat = [r for text in records for r in text if r is not None]
    flags = Counter(code for r in flat for code in r.get("flags", []))
    return {
        "sentences": len(flat),
        "kept": sum(r.get("kept", 0) for r in flat),
        "repaired": sum(r.get("repaired", 0) for r in flat),
        "flagged": sum(bool(r.get("flags")) for r in flat),
        "flags": {code: flags[code] for code in FLAGS if flags[code]},
    }


def gate_summary(records: Sequence[Sequence[dict[str, Any] | None]], min_confidence: float) -> dict[str, Any]:
    """What the quality gate did to a job: sentences retried with a wider beam, still low, withheld."""
    flat = [r for text in records for r in text if r is not None]
    return {
        "min_confidence": min_confidence,
        "retried": sum("low_confidence" in r.get("retried", []) for r in flat),
        "low_confidence": sum("low_confidence" in r.get("flags", []) for r in flat),
        "withheld": sum(bool(r.get("withheld")) for r in flat),
    }
