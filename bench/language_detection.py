"""Language identification on short texts: accuracy per language, per kind (mixed: Chinese or Japanese
with English words, English with Chinese words) and per length, and time per text, of the offline
libraries in bench.language_detectors, against counting scripts (the floor) and transq's own detection
(shared.routing.language_detection: the chosen library, with its mapping to the pairs' codes), in one run.

    python -m bench.language_detection [--data bench/data/language_detection.tsv] [--repeat 3]

The set: bench/data/language_detection.tsv (Chinese and English sentences of worker/translation/model/data, Chinese
technical prose of bench/data/zh_sentences.txt, and Japanese, very short, mixed and other-language texts
written for it). A wrong answer is any code other than the label's, an empty one (no answer) included.
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import psutil

from bench.common import machine, table
from bench.language_detectors import CANDIDATES, Detect

DATA = Path(__file__).resolve().parent / "data" / "language_detection.tsv"
BUCKETS = ((1, 4), (5, 15), (16, 60), (61, 10**9))
log = logging.getLogger("bench.language_detection")


@dataclass(frozen=True)
class Sample:
    language: str
    kind: str
    text: str


@dataclass
class Outcome:
    answers: list[tuple[str, float]]
    load_ms: float
    us_per_text: float
    rss_mb: float


def load(path: Path) -> list[Sample]:
    samples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or line.startswith("language\t") or not line.strip():
            continue
        language, kind, _, text = line.split("\t", 3)
        samples.append(Sample(language, kind, text))
    return samples


def run(make: Callable[[], Detect], samples: list[Sample], repeat: int) -> Outcome:
    process = psutil.Process()
    before = process.memory_info().rss
    started = time.perf_counter()
    detect = make()
    detect(samples[0].text)  # models some libraries load on first use
    load_ms = (time.perf_counter() - started) * 1000
    best = float("inf")
    answers: list[tuple[str, float]] = []
    for _ in range(repeat):
        started = time.perf_counter()
        answers = [detect(s.text) for s in samples]
        best = min(best, time.perf_counter() - started)
    return Outcome(answers, load_ms, best / len(samples) * 1e6, (process.memory_info().rss - before) / 2**20)


def slices(samples: list[Sample]) -> dict[str, list[int]]:
    """Row name -> the indexes of its samples."""
    rows: dict[str, list[int]] = {}

    def add(name: str, test) -> None:  # type: ignore[no-untyped-def]
        found = [i for i, s in enumerate(samples) if test(s)]
        if found:
            rows[f"{name} (n={len(found)})"] = found

    for language in ("zh", "en", "ja"):
        add(f"{language}, all kinds", lambda s, lang=language: s.language == lang)
    add("other languages", lambda s: s.language not in ("zh", "en", "ja"))
    for kind in ("sentence", "short", "mixed"):
        add(f"kind: {kind}", lambda s, k=kind: s.kind == k)
    for low, high in BUCKETS:
        name = f"length {low}-{high} chars" if high < 10**9 else f"length over {low - 1} chars"
        add(name, lambda s, lo=low, hi=high: lo <= len(s.text) <= hi)
    add("all", lambda s: True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeat", type=int, default=3, help="passes over the set; the fastest is kept")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    samples = load(args.data)
    candidates = dict(CANDIDATES)
    candidates["transq (shared.routing.language_detection)"] = _transq
    outcomes: dict[str, Outcome] = {}
    for name, make in candidates.items():
        try:
            outcomes[name] = run(make, samples, args.repeat)
        except ImportError as exc:
            log.warning("%s skipped: %s", name, exc)
    names = list(outcomes)
    rows: list[list[object]] = []
    for row, indexes in slices(samples).items():
        cells: list[object] = [row]
        for name in names:
            right = sum(outcomes[name].answers[i][0] == samples[i].language for i in indexes)
            cells.append(f"{100 * right / len(indexes):.1f}%")
        rows.append(cells)
    rows.append(["µs per text (fastest pass)", *[f"{outcomes[n].us_per_text:.0f}" for n in names]])
    rows.append(["load + first text, ms", *[f"{outcomes[n].load_ms:.0f}" for n in names]])
    rows.append(["RSS growth, MiB", *[f"{outcomes[n].rss_mb:.0f}" for n in names]])
    print(f"\n{machine()}; load average {' '.join(f'{x:.2f}' for x in psutil.getloadavg())}\n")
    print(table(["accuracy", *names], rows))
    for name in names:
        wrong = [(s.language, outcomes[name].answers[i][0] or "-", s.text[:30]) for i, s in enumerate(samples)]
        wrong = [w for w in wrong if w[0] != w[1]]
        log.info("%s wrong on %d: %s", name, len(wrong), "; ".join(f"{a}->{b} {t!r}" for a, b, t in wrong[:12]))


def _transq() -> Detect:
    from shared.routing.language_detection import detect

    return lambda text: (lambda d: (d.language, d.confidence))(detect(text))


if __name__ == "__main__":
    main()
