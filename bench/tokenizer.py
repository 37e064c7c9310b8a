"""The engine's tokenizer: transformers' MarianTokenizer (AutoTokenizer) against MarianText (sentencepiece
alone, worker.translation.model.marian_text), in one run.

Start-up, each in fresh child processes (the best of --starts): seconds to import, seconds to load the model
folder's tokenizer, the child's resident set after loading and its peak (VmRSS, VmHWM), against a bare
interpreter, and how many modules it imported. Throughput, in this process, the two interleaved (the best of --rounds): the engine's calls on
the workload in batches of 32 sentences, `tokenizer(batch, add_special_tokens=False,
split_special_tokens=True)` and `batch_decode(ids, skip_special_tokens=True,
clean_up_tokenization_spaces=True)`. Both must give the same ids and texts, or the run stops.

    python -m bench.tokenizer [WORKLOAD] [--model DIR] [--starts 5] [--rounds 5] [--copies 20]

WORKLOAD defaults to bench/data/zh_sentences.txt; --model to the opus-mt-zh-en-shaped model (built once into
.bench-cache/: a 65,001-piece vocab.json, a 4,000-piece source.spm); --copies: the workload repeated.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.common import arguments, machine, opus_shaped_model, parse, table
from bench.engines import cpu_flags

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "bench" / "data" / "zh_sentences.txt"
BATCH = 32
log = logging.getLogger("bench.tokenizer")

# A child: import, load, then its memory (MiB), as one JSON line.
CHILD = """
import json, sys, time
started = time.perf_counter()
exec(sys.argv[1])
imported = time.perf_counter()
tokenizer = eval(sys.argv[2])
loaded = time.perf_counter()
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
mib = lambda key: int(status[key].split()[0]) / 1024
figures = {"import": imported - started, "load": loaded - imported, "rss": mib("VmRSS"), "hwm": mib("VmHWM")}
print(json.dumps({**figures, "modules": len(sys.modules), "torch": "torch" in sys.modules}))
"""
KINDS = {
    "bare interpreter (baseline)": ("import json", "None"),
    "transformers: import + AutoTokenizer (MarianTokenizer)": (
        "from transformers import AutoTokenizer",
        "AutoTokenizer.from_pretrained(sys.argv[3])",
    ),
    "MarianText: sentencepiece alone": (
        "from worker.translation.model.marian_text import MarianText",
        "MarianText(sys.argv[3])",
    ),
}


def start_up(folder: Path, starts: int) -> dict[str, dict[str, float]]:
    """Each kind's best import and load seconds, and its smallest resident set and peak, over `starts` children
    (the kinds interleaved)."""
    best: dict[str, dict[str, float]] = {}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(starts):
        for kind, (imports, load) in KINDS.items():
            command = [sys.executable, "-c", CHILD, imports, load, str(folder)]
            out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
            figures = json.loads(out.strip().splitlines()[-1])
            best[kind] = {k: min(v, best.get(kind, figures)[k]) for k, v in figures.items()}  # (the same modules)
    return best


def batches(texts: list[str]) -> list[list[str]]:
    return [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]


def encode_all(tokenizer, groups: list[list[str]]) -> list[list[int]]:  # type: ignore[no-untyped-def]
    return [
        list(ids)
        for group in groups
        for ids in tokenizer(group, add_special_tokens=False, split_special_tokens=True)["input_ids"]
    ]


def decode_all(tokenizer, ids: list[list[int]]) -> list[str]:  # type: ignore[no-untyped-def]
    groups = [ids[i : i + BATCH] for i in range(0, len(ids), BATCH)]
    kwargs = {"skip_special_tokens": True, "clean_up_tokenization_spaces": True}
    return [text for group in groups for text in tokenizer.batch_decode(group, **kwargs)]


def throughput(folder: Path, texts: list[str], rounds: int) -> dict[str, tuple[float, float]]:
    """Sentences per second encoding and decoding, each tokenizer's best of `rounds` (interleaved)."""
    from transformers import AutoTokenizer

    from worker.translation.model.marian_text import MarianText

    tokenizers = {"transformers": AutoTokenizer.from_pretrained(str(folder)), "MarianText": MarianText(folder)}
    groups = batches(texts)
    ids = encode_all(tokenizers["transformers"], groups)
    if encode_all(tokenizers["MarianText"], groups) != ids:
        raise SystemExit("MarianText's ids differ from transformers': no figures")
    if decode_all(tokenizers["MarianText"], ids) != decode_all(tokenizers["transformers"], ids):
        raise SystemExit("MarianText's texts differ from transformers': no figures")
    best = {name: (0.0, 0.0) for name in tokenizers}
    for _ in range(rounds):
        for name, tokenizer in tokenizers.items():
            started = time.perf_counter()
            encode_all(tokenizer, groups)
            encoded = time.perf_counter()
            decode_all(tokenizer, ids)
            decoded = time.perf_counter()
            rates = (len(texts) / (encoded - started), len(texts) / (decoded - encoded))
            best[name] = (max(best[name][0], rates[0]), max(best[name][1], rates[1]))
    return best


def main() -> None:
    parser = arguments(__doc__, workload="optional")
    parser.add_argument("--model", help="a Marian model folder (default: the opus-mt-zh-en-shaped model)")
    parser.add_argument("--starts", type=int, default=5, help="fresh child processes per kind")
    parser.add_argument("--rounds", type=int, default=5, help="passes over the workload per tokenizer")
    parser.add_argument("--copies", type=int, default=20, help="the workload repeated this many times")
    args = parse(parser)
    lines = Path(args.workload or WORKLOAD).read_text(encoding="utf-8").splitlines()
    texts = [line for line in lines if line.strip()]
    folder = Path(args.model) if args.model else opus_shaped_model(texts)
    log.info("start-up: %d children per kind", args.starts)
    starts = start_up(folder, args.starts)
    log.info("throughput: %d sentences, %d rounds", len(texts) * args.copies, args.rounds)
    rates = throughput(folder, texts * args.copies, args.rounds)
    bare = starts["bare interpreter (baseline)"]
    rows = []
    for kind, figures in starts.items():
        name = "MarianText" if kind.startswith("MarianText") else "transformers" if "Auto" in kind else None
        encode, decode = rates[name] if name else (None, None)
        rows.append(
            [
                kind,
                figures["import"],
                figures["load"],
                figures["rss"],
                figures["rss"] - bare["rss"],
                figures["hwm"],
                f"{figures['modules']:.0f}" + (" (torch)" if figures["torch"] else ""),
                "-" if encode is None else f"{encode:,.0f}",
                "-" if decode is None else f"{decode:,.0f}",
            ]
        )
    print(f"{machine()}; flags: {cpu_flags()}; load average {os.getloadavg()[0]:.2f} (1 min) at the end")
    print(f"model {folder.name}; {len(texts)} workload sentences x {args.copies}; ids and texts equal: yes")
    headers = ["tokenizer", "import s", "load s", "RSS MiB", "RSS - bare MiB", "peak RSS MiB", "modules"]
    print(table(headers + ["encode sentences/s", "decode sentences/s"], rows))
    ratio = [rates["MarianText"][i] / rates["transformers"][i] for i in (0, 1)]
    print(f"MarianText / transformers: encode x{ratio[0]:.1f}, decode x{ratio[1]:.1f}")


if __name__ == "__main__":
    main()
