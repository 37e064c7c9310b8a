"""Cold start: the API to its first answer, the worker to its first heartbeat (model loaded), against
a bare process that only imports torch + transformers and loads the same model, in one run.

    python -m bench.startup WORKLOAD       (WORKLOAD builds the cached opus-mt-shaped model if needed)
    python -m bench.startup --dev          a newcomer's `transq dev --test-model`: start to its ready line
                                           and to a first translation, against the bare load of that model
                                           (--rebuild adds building the copy model from scratch, the old
                                           first start)
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from bench.common import arguments, load_workload, machine, opus_shaped_model, parse, table
from devstack.processes import ROOT, ApiProcess, WorkerProcess
from devstack.redis_server import RedisServer
from shared.settings import Settings

BARE_LOAD = (
    "import torch\n"
    "from transformers import AutoModelForSeq2SeqLM, AutoTokenizer\n"
    "import sys\n"
    "AutoTokenizer.from_pretrained(sys.argv[1])\n"
    "model = AutoModelForSeq2SeqLM.from_pretrained(sys.argv[1]).eval()\n"
    "torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)\n"
)


def seconds_to_run(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def dev_start(port: int) -> tuple[float, float]:
    """`transq dev --test-model` as a newcomer runs it: seconds to its ready line, and to the answer of a
    first `POST /api/translate`."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "transq_cli.main", "dev", "--test-model", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        if not any(line.startswith("ready") for line in process.stdout):
            raise RuntimeError("transq dev exited before its ready line")
        ready = time.perf_counter() - started
        url = f"http://127.0.0.1:{port}/api/translate"
        answer = requests.post(url, json={"text": "你好。"}, timeout=120).json()
        if answer.get("translation") != "你好。":
            raise RuntimeError(f"the copy model did not copy: {answer}")
        return ready, time.perf_counter() - started
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)


def dev_main(repeat: int, rebuild: bool) -> None:
    from devstack.redis_server import free_port
    from transq_cli.main import test_model_folder

    ready, first, bare, built = [], [], [], []
    for _ in range(repeat):
        r, f = dev_start(free_port())
        ready.append(r)
        first.append(f)
        bare.append(seconds_to_run([sys.executable, "-c", BARE_LOAD, str(test_model_folder())]))
    rows = [
        ["transq dev --test-model: start to its ready line", min(ready), sorted(ready)[len(ready) // 2]],
        ["... and to a first translation (POST /api/translate)", min(first), sorted(first)[len(first) // 2]],
        [
            "baseline: bare process, import + from_pretrained + quantize_dynamic",
            min(bare),
            sorted(bare)[len(bare) // 2],
        ],
    ]
    if rebuild:  # constructing the copy model instead of copying the shipped one (once)
        with tempfile.TemporaryDirectory() as tmp:
            built.append(
                seconds_to_run([sys.executable, "-m", "worker.translation.model.offline_model", tmp + "/m", "--build"])
            )
        rows.append(["building the copy model (--build), once", built[0], built[0]])
    print(f"\nthe shipped offline test model, {repeat} runs each; {machine()}\n")
    print(table(["what", "best s", "median s"], rows))


def main() -> None:
    parser = arguments(__doc__, workload="optional")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dev", action="store_true", help="time `transq dev --test-model` instead")
    parser.add_argument("--rebuild", action="store_true", help="--dev: add building the copy model from scratch")
    args = parse(parser)
    if args.dev:
        dev_main(args.repeat, args.rebuild)
        return
    if not args.workload:
        parser.error("give a WORKLOAD, or --dev")
    model = opus_shaped_model(load_workload(args.workload, 64))
    rows = []
    with tempfile.TemporaryDirectory() as tmp, RedisServer() as redis_server:
        settings = Settings(
            output_guard=False,  # the random-weight model's outputs loop by design
            redis_url=redis_server.url,
            model=str(model),
            rate_limit="",
            log_level="WARNING",
            heartbeat_seconds=0.2,
        )
        api_import, api_ready, worker_ready, bare = [], [], [], []
        for i in range(args.repeat):
            api_import.append(seconds_to_run([sys.executable, "-c", "from api import create_app; create_app()"]))
            started = time.perf_counter()
            api = ApiProcess(settings, Path(tmp) / f"api{i}.log").start(workers=1, threads=4)
            api_ready.append(time.perf_counter() - started)
            api.stop()
            started = time.perf_counter()
            worker = WorkerProcess(settings, Path(tmp) / f"worker{i}.log").start(wait_ready=True, timeout=120)
            worker_ready.append(time.perf_counter() - started)
            worker.stop()
            bare.append(seconds_to_run([sys.executable, "-c", BARE_LOAD, str(model)]))
    for name, values in (
        ("API: import + create_app()", api_import),
        ("API: gunicorn start to first /healthz 200", api_ready),
        ("worker: process start to first heartbeat (model loaded, int8, warmed up)", worker_ready),
        ("baseline: bare process, import + from_pretrained + quantize_dynamic", bare),
    ):
        rows.append([name, min(values), sorted(values)[len(values) // 2]])
    print(f"\nopus-mt-zh-en-shaped model, {args.repeat} runs each; {machine()}\n")
    print(table(["what", "best s", "median s"], rows))
    print(
        f"\nworker_ready_s={sorted(worker_ready)[len(worker_ready) // 2]:.1f} "
        f"bare_load_s={sorted(bare)[len(bare) // 2]:.1f} api_ready_s={sorted(api_ready)[len(api_ready) // 2]:.2f}"
    )


if __name__ == "__main__":
    main()
