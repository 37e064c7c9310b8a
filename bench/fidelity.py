"""The fidelity check and span protection (shared.text.fidelity, shared.text.protected_spans): what they cost per
sentence and how right the check is.

    python -m bench.fidelity [--sentences 48] [--passes 3]

1. Precision and recall of the check on hand-made cases (CASES: a source, a translation, the flags a reader
   would give it), against a baseline that flags nothing.
2. Per model: the tests' copy model and the tiny random model (which mangles numbers and links), each sentence
   of a workload of sentences with numbers, dates, URLs, e-mail addresses and variables translated plainly
   (the baseline) and through span protection (placeholders, or the pieces between the spans where a
   placeholder is lost), then checked: milliseconds per sentence of each, the check's own microseconds per
   sentence, the sentences flagged, and of the sentences a model copied exactly, how many were flagged (none
   may be). The copy model's translation is its source: its script check is left out, as a copy is of the
   source's script by design.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from bench.common import machine, table
from bench.engines import cpu_flags

log = logging.getLogger("bench.fidelity")

# (source, translation, flags a reader would give it)
CASES: list[tuple[str, str, set[str]]] = [
    ("我有3个苹果。", "I have 3 apples.", set()),
    ("我有3个苹果。", "I have three apples.", {"span_missing"}),
    ("价格是1,234.50元。", "The price is 1,234.50 yuan.", set()),
    ("价格是1,234.50元。", "The price is 1234.5 yuan.", {"span_missing"}),
    ("会议在2026-01-02 10:30开始。", "The meeting starts at 2026-01-02 10:30.", set()),
    ("会议在2026-01-02 10:30开始。", "The meeting starts on January 2nd at 10:30.", {"span_missing"}),
    ("请访问https://example.com/docs。", "Please visit https://example.com/docs.", set()),
    ("请访问https://example.com/docs。", "Please visit https://example.com/doc.", {"span_missing"}),
    ("请访问https://example.com/docs。", "Visit https://example.com/docs https://example.com/docs", {"span_repeated"}),
    ("联系bob@example.org。", "Contact bob@example.org.", set()),
    ("联系bob@example.org。", "Contact bob at example.org.", {"span_missing"}),
    ("你好，{name}！", "Hello, {name}!", set()),
    ("你好，{name}！", "Hello, {名字}!", {"span_missing", "untranslated"}),
    ("共有%d个文件。", "There are %d files.", set()),
    ("共有%d个文件。", "There are %s files.", {"span_missing"}),
    ("运行`ls -la`命令。", "Run the `ls -la` command.", set()),
    ("今天天气很好。", "The weather is nice today.", set()),
    ("今天天气很好。", "Today 天气 is nice.", {"untranslated"}),
    ("今天天气很好。", "今天天气很好。", {"untranslated"}),
    ("第3章第12节", "Chapter 3, section 12", set()),
    ("第3章第12节", "Chapter 3, section 3", {"span_missing", "span_repeated"}),
    ("温度是25°C。", "The temperature is 25°C.", set()),
    ("温度是25°C。", "The temperature is 77°F.", {"span_missing"}),
    ("他在2019年出生。", "He was born in 2019.", set()),
    ("版本2.1比版本2.0好。", "Version 2.1 is better than version 2.0.", set()),
    ("版本2.1比版本2.0好。", "Version 2.1 is better than version 2.1.", {"span_missing", "span_repeated"}),
    ("MP3播放器", "MP3 player", set()),
    ("下午3点见。", "See you at 3 pm.", set()),
    # What the rules cannot judge: a number a reader accepts in words, and one changed in words.
    ("下午3点见。", "See you at three.", set()),
    ("他有三个孩子。", "He has five children.", {"span_missing"}),
]

SENTENCES = [
    "Version {n}.1 ships on 2026-01-{d:02d} at 10:30, see https://example.com/releases/{n} for details.",
    "Mail support{n}@example.org or call 555-01{d:02d} before {d} March.",
    "Hello {{name}}, you have %d new messages and {n} drafts.",
    "The file weighs {n}.5 MB and costs $1,2{d:02d}.00 this year.",
    "我有{n}个苹果，价格是{d}.5元。",
    "会议在2026-02-{d:02d} 09:{d:02d}开始，地址是https://example.com/m{n}。",
]


def workload(count: int) -> list[str]:
    return [SENTENCES[i % len(SENTENCES)].format(n=i + 2, d=i % 28 + 1) for i in range(count)]


def case_figures() -> list[list[object]]:
    from shared.text.fidelity import check, untranslated_pattern

    han = untranslated_pattern("zh", "en")
    rows = []
    for name, judge in (
        ("fidelity check", lambda s, t: set(check(s, t, han).get("flags", []))),
        ("flag nothing", lambda s, t: set()),
    ):
        tp = fp = fn = 0
        for source, translation, expected in CASES:
            found = judge(source, translation)
            tp, fp, fn = tp + len(found & expected), fp + len(found - expected), fn + len(expected - found)
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        rows.append([name, len(CASES), tp, fp, fn, precision, recall])
    return rows


def model_figures(name: str, folder: Path, sentences: list[str], passes: int) -> list[list[object]]:
    from shared.settings import Settings
    from shared.text.fidelity import check, untranslated_pattern
    from shared.text.protected_spans import ProtectedTerms
    from shared.text.term_protection import translate_with_glossary
    from worker.translation.model.engine import TranslationEngine

    engine = TranslationEngine(Settings(model=str(folder), output_guard=False, max_new_tokens=64))
    han = None if name == "copy" else untranslated_pattern("zh", "en")

    def plain() -> list[str]:
        return list(engine.translate(sentences))  # type: ignore[arg-type]

    def protected() -> list[str]:
        return translate_with_glossary(engine.translate, sentences, ProtectedTerms())  # type: ignore[arg-type]

    rows = []
    for label, run in (("plain (baseline)", plain), ("spans protected", protected)):
        best, out = float("inf"), []
        for _ in range(passes):
            started = time.perf_counter()
            out = run()
            best = min(best, time.perf_counter() - started)
        checking, records = float("inf"), []
        for _ in range(passes):
            started = time.perf_counter()
            records = [check(s, t, han) for s, t in zip(sentences, out)]
            checking = min(checking, time.perf_counter() - started)
        flagged = sum(bool(r.get("flags")) for r in records)
        missing = sum("span_missing" in r.get("flags", []) for r in records)
        copied = [r for s, t, r in zip(sentences, out, records) if s == t]
        per_sentence = [1000 * best / len(sentences), 1e6 * checking / len(sentences)]
        rows.append(
            [name, label, *per_sentence, flagged, missing, len(copied), sum(bool(r.get("flags")) for r in copied)]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=48)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from worker.translation.model.offline_model import make_test_model

    print(f"machine: {machine()}\ncpu flags: {cpu_flags()}\n")
    print(
        table(["judge", "cases", "flags right", "flags wrong", "flags missed", "precision", "recall"], case_figures())
    )
    sentences = workload(args.sentences)
    rows = []
    with tempfile.TemporaryDirectory(prefix="transq-fidelity-") as tmp:
        models = {
            "copy": make_test_model(Path(tmp) / "copy"),
            "random": make_test_model(Path(tmp) / "random", behaviour="random"),
        }
        for name, folder in models.items():
            rows += model_figures(name, folder, sentences, args.passes)
    print()
    print(f"{len(sentences)} sentences; best of {args.passes} passes; the copy model's script check left out")
    headers = ["model", "translation", "ms/sentence", "check µs/sentence", "flagged", "span_missing", "copied"]
    headers.append("of those flagged")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
