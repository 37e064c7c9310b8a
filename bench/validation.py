"""Validation cost of hostile bodies: parsing, checking and splitting requests of up to 1 MiB (the default
TRANSQ_MAX_BODY_BYTES) under the default limits, in process, against json.loads of the same bytes (the
floor every JSON API pays). A body over a limit is rejected (422) before it is split.

    python -m bench.validation [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import time

from api.validation import parse_translation_request
from bench.common import machine, table
from shared.errors import ValidationError
from shared.settings import Settings

MIB = 1 << 20


def bodies() -> dict[str, bytes]:
    """1 MiB request bodies that are costly to split, each one unpunctuated sentence unless named."""

    def text(unit: str, chars: int) -> bytes:
        return json.dumps({"text": unit * (chars // len(unit))}, ensure_ascii=False).encode()

    limit = Settings().max_chars
    return {
        'one sentence of "a" + zero-width joiner, at the character limit': text("a\u200d", limit),
        "one sentence of e + combining accent, at the character limit": text("e\u0301", limit),
        "one sentence of Chinese characters, at the character limit": text("字", limit),
        "one sentence of words and spaces, at the character limit": text("ab ", limit),
        "Chinese sentences of 10 characters, at the sentence limit": text("今天天气很好吗好吗。", limit),
        "1,000 texts of 100 characters, at both limits": json.dumps(
            {"texts": ["字" * 100] * 1000}, ensure_ascii=False
        ).encode(),
        "a glossary at its limits (1,000 terms of 100 characters) and 100,000 characters": json.dumps(
            {"text": "字" * limit, "glossary": {f"{n:04d}" + "术" * 96: "t" * 100 for n in range(1000)}},
            ensure_ascii=False,
        ).encode(),
        "1 MiB of one Chinese sentence (over the character limit: 422)": text("字", MIB // 3 - 10),
        "1 MiB of joiners (over the character limit: 422)": text("a\u200d", MIB // 2 - 10),
    }


def _validate(body: dict, settings: Settings) -> str:
    try:
        return f"{len(parse_translation_request(body, settings).sentences)} sentences"
    except ValidationError as exc:
        return f"422 ({exc.message[:40]})"


def best_of(repeat: int, call) -> float:  # type: ignore[no-untyped-def]
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        timings.append(time.perf_counter() - started)
    return min(timings) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each case; the best is kept")
    args = parser.parse_args()
    settings = Settings()
    rows = []
    for name, body in bodies().items():
        floor = best_of(args.repeat, lambda b=body: json.loads(b))
        parsed = json.loads(body)
        checked = best_of(args.repeat, lambda p=parsed: _validate(p, settings))
        outcome = _validate(parsed, settings)
        rows.append([name, f"{len(body) / MIB:.2f}", outcome, floor, floor + checked, (floor + checked) / floor])
    print(f"\n{machine()}\n")
    headers = ["body", "MiB", "outcome", "json.loads ms", "json.loads + validate + split ms", "÷ json.loads"]
    print(table(headers, rows))
    worst = max(r[4] for r in rows)
    print(f"\nworst_validation_ms={worst:.1f} (goal: at most 50 ms for a 1 MiB body)")


if __name__ == "__main__":
    main()
