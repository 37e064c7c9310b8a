"""torch's argmax against worker.translation.model.row_top.argmax_rows, on the score matrices the decoding loop makes.

    python -m bench.row_top [--threads 2] [--repeats 200]

Rows x columns: 32 and 8 rows (a greedy batch before and after most sentences end), over opus-mt's 65,001
columns and a 32,300-column target vocabulary; microseconds per call, the best of five rounds.
"""

from __future__ import annotations

import time

import torch

from bench.common import arguments, machine, parse, table
from bench.engines import cpu_flags
from worker.translation.model.row_top import argmax_rows


def best_microseconds(call, repeats: int) -> float:  # type: ignore[no-untyped-def]
    call()
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeats):
            call()
        rounds.append((time.perf_counter() - started) / repeats * 1e6)
    return min(rounds)


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=200)
    args = parse(parser)
    torch.set_num_threads(args.threads)
    rows = []
    for height, width in [(32, 65001), (8, 65001), (32, 32300), (8, 32300)]:
        scores = torch.randn(height, width, generator=torch.Generator().manual_seed(width))
        assert torch.equal(argmax_rows(scores), scores.argmax(-1))
        torch_us = best_microseconds(lambda: scores.argmax(-1), args.repeats)  # noqa: B023
        ours_us = best_microseconds(lambda: argmax_rows(scores), args.repeats)  # noqa: B023
        rows.append([f"{height} x {width}", torch_us, ours_us, torch_us / ours_us])
    print(f"\n{machine()}; {args.threads} thread(s); CPU flags: {cpu_flags()}\n")
    print(table(["scores", "torch argmax µs", "argmax_rows µs", "speedup"], rows))


if __name__ == "__main__":
    main()
