"""What the benchmarks share: their command line, the opus-mt-shaped model, the workload, peak RSS,
percentiles, tables."""

from __future__ import annotations

import argparse
import logging
import os
import statistics
from pathlib import Path

from shared.settings import Settings
from shared.store.sentence_cache import normalise
from shared.text.splitter import sentences, split_text

CACHE_DIR = Path(__file__).resolve().parents[1] / ".bench-cache"
log = logging.getLogger("bench")


WORKLOAD_HELP = "text file of Chinese sentences, e.g. ../shared/data/zh_sentences.txt"


def arguments(doc: str | None, workload: str = "", tokens: int = 0) -> argparse.ArgumentParser:
    """A benchmark's command line: its module docstring as the help, a `workload` file argument ("required"
    or "optional"), `--tokens` when `tokens` (every output forced to that many tokens by default)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if workload:
        parser.add_argument("workload", nargs=None if workload == "required" else "?", help=WORKLOAD_HELP)
    if tokens:
        parser.add_argument("--tokens", type=int, default=tokens, help="every output is forced to this many tokens")
    return parser


def parse(parser: argparse.ArgumentParser, level: int = logging.INFO) -> argparse.Namespace:
    """Parse the command line and log progress lines to stderr (the table goes to stdout)."""
    args = parser.parse_args()
    logging.basicConfig(level=level, format="%(message)s")
    return args


def stack_settings(
    model: Path, broker_url: str, cache_url: str, beams: int = 1, tokens: int = 32, **overrides: object
) -> Settings:
    """Settings of a benchmark's API and worker: the random-weight model with its outputs forced to `tokens`
    (its outputs loop by design, so the output guard is off), no rate limit, quiet logs (BENCH_LOG_LEVEL)."""
    fields: dict[str, object] = {
        "output_guard": False,
        "redis_url": broker_url,
        "cache_url": cache_url,
        "model": str(model),
        "num_beams": beams,
        "max_new_tokens": tokens,
        "min_new_tokens": tokens,
        "rate_limit": "",
        "log_level": os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
    }
    return Settings(**{**fields, **overrides})  # type: ignore[arg-type]


def opus_shaped_model(workload: list[str]) -> Path:
    """A model of the exact opus-mt-zh-en shape with random weights, built once and cached."""
    folder = CACHE_DIR / "opus-mt-zh-en-shape"
    if not (folder / "config.json").exists():
        from worker.translation.model.offline_model import make_test_model

        log.info("building the opus-mt-zh-en-shaped model in %s (once)", folder)
        make_test_model(folder, shape="opus", zh_lines=workload)
    return folder


def machine() -> str:
    """The CPU the figures were measured on: int8 speed depends on its dot-product instructions (VNNI)."""
    name, flags = "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                name = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    vnni = "yes" if flags & {"avx512_vnni", "avx_vnni"} else "no"
    return f"{name}, {len(os.sched_getaffinity(0))} CPUs, int8 dot-product instructions (VNNI): {vnni}"


def load_workload(path: str, count: int) -> list[str]:
    """`count` distinct sentences from a text file, split as the service splits them."""
    text = Path(path).read_text(encoding="utf-8")
    found = list(dict.fromkeys(normalise(s) for s in sentences(split_text(text)) if len(s) >= 4))
    if len(found) < count:
        raise SystemExit(f"{path} has only {len(found)} distinct sentences; {count} are needed")
    return found[:count]


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def table(headers: list[str], rows: list[list[object]]) -> str:
    cells = [headers] + [[f"{c:.2f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
