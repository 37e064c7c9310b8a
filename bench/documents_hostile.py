"""Cost of hostile documents: each case of bench.hostile_documents parsed (worker.documents.formats.prepare) and
rendered back (its units as their own translations) in a fresh process with a CPU-time and address-space
limit, against a benign document of the same format and size in the same run.

    python -m bench.documents_hostile [--mib 1] [--cpu-limit 60] [--memory-limit-mb 4096]

A case that runs past the CPU limit or the memory limit reads as killed; CPU seconds are user + system of
the parse and the render, peak RSS delta is the peak resident set above the process's size before parsing.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import machine, table
from bench.hostile_documents import MIB, Case, cases

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from worker.documents.formats import DocumentError, prepare

def rss(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0

fmt, path = sys.argv[1], sys.argv[2]
data = Path(path).read_bytes()
before_rss = rss("VmRSS:")
usage = resource.getrusage(resource.RUSAGE_SELF)
before_cpu = usage.ru_utime + usage.ru_stime
try:
    prepared = prepare(fmt, data, 300)
    output = prepared.render(prepared.units)
    result = f"{len(prepared.units)} units, {len(output)} out"
except DocumentError as exc:
    result = f"refused: {exc}"
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime - before_cpu, "rss": rss("VmHWM:") - before_rss,
                  "result": result}))
"""


def run_case(case: Case, folder: Path, cpu_limit: int, memory_mb: int) -> dict:
    path = folder / "input"
    path.write_bytes(case.data)

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 5))
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * MIB, memory_mb * MIB))

    done = subprocess.run(
        [sys.executable, "-c", _CHILD, case.format, str(path)],
        capture_output=True,
        text=True,
        preexec_fn=limits,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        return json.loads(lines[-1])
    if done.returncode < 0:
        return {"cpu": float(cpu_limit), "rss": float("nan"), "result": f"killed past {cpu_limit} s of CPU"}
    why = "MemoryError" if "MemoryError" in done.stderr else (done.stderr.strip().splitlines() or ["?"])[-1][:60]
    return {"cpu": float("nan"), "rss": float(memory_mb), "result": f"failed: {why} (limit {memory_mb} MiB)"}


def _short(result: str) -> str:
    """A refusal as the setting it names (the whole message is on stderr)."""
    setting = re.search(r"TRANSQ_[A-Z_]+(?:=\d+)?", result)
    return f"refused: over {setting.group()}" if result.startswith("refused") and setting else result[:70]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=float, default=1.0, help="size of the HTML, Markdown and SubRip cases")
    parser.add_argument("--cpu-limit", type=int, default=60, help="CPU seconds a case may use before it is killed")
    parser.add_argument("--memory-limit-mb", type=int, default=4096, help="address space a case may use")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    args = parser.parse_args()
    rows, measured = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for case in cases(int(args.mib * MIB)):
            if args.only and args.only not in case.name and not case.name.endswith("benign"):
                continue
            got = run_case(case, Path(folder), args.cpu_limit, args.memory_limit_mb)
            measured[case.name] = got
            baseline = measured.get(case.benign, got)
            ratio = got["cpu"] / baseline["cpu"] if baseline["cpu"] > 0 else float("nan")
            size = f"{len(case.data) / 1024:.0f} KiB"
            rows.append([case.name, size, got["cpu"], ratio, got["rss"], _short(got["result"])])
            print(f"{case.name}: {got}", file=sys.stderr, flush=True)
    print(f"\n{machine()}\n")
    headers = ["case", "input", "CPU s", "÷ benign CPU", "peak RSS delta MiB", "result"]
    print(table(headers, rows))
    worst = max(row[2] for row in rows if row[2] == row[2])
    print(f"\nworst_cpu_s={worst:.2f} (goal: about 1 s per MiB of input or less, a bounded peak RSS)")


if __name__ == "__main__":
    main()
