"""Per-job cost: what one job costs the API, Redis and the worker outside the model, in CPU and in Redis
commands, counted rather than timed (wall-clock throughput is noise on a loaded machine).

    python -m bench.per_job_cost [WORKLOAD] [--jobs 64] [--baseline TREE]

Runs the two traffic shapes of bench.throughput (N one-sentence jobs at once, one job of N sentences) through
gunicorn, a real worker and Redis, on the tiny copy model (so the model's own CPU is small and the per-job
cost shows). Per job it reports: Redis commands and Lua calls (INFO commandstats deltas), Redis CPU (INFO cpu,
sys+user), the API's gunicorn processes' CPU and the worker's (its Celery parent and pool process: psutil).
Each row counts everything the processes did meanwhile, including what the stack does anyway (heartbeats,
kombu's polling): the one job of N sentences (one job) mostly counts how long it ran on a loaded machine, so
compare it between trees only. The idle stack's own rate (measured for IDLE_SECONDS first) is printed too, and
the Redis commands again less that rate over each shape's duration (noisy: the idle rate drifts). `--baseline TREE` runs
the same against another checkout (e.g. `git worktree add /tmp/base 199be0a`) in the same run, first.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import redis
import requests

from bench.common import arguments, load_workload, machine, parse, stack_settings, table
from bench.throughput import _wait_all
from devstack.processes import ROOT, ApiProcess, WorkerProcess
from devstack.redis_server import RedisServer

log = logging.getLogger("bench.per_job_cost")
TOP = 8  # commands listed by name in the breakdown
IDLE_SECONDS = 5  # how long the idle stack is measured, to take its background out


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def _api_pids(api: ApiProcess) -> list[int]:
    parent = psutil.Process(api.process.pid)  # type: ignore[union-attr]
    return [parent.pid] + [c.pid for c in parent.children(recursive=True)]


class Meter:
    """CPU and Redis counters of one stack, read before and after a shape runs."""

    def __init__(self, broker: redis.Redis, api: ApiProcess, worker: WorkerProcess):
        self.broker, self.api, self.worker = broker, api, worker

    def read(self) -> dict:
        cpu = self.broker.info("cpu")
        stats = self.broker.info("commandstats")
        return {
            "redis_cpu": cpu["used_cpu_sys"] + cpu["used_cpu_user"],
            "api_cpu": _cpu(_api_pids(self.api)),
            "worker_cpu": _cpu([self.worker.process.pid, *self.worker.child_pids()]),  # type: ignore[union-attr]
            "commands": {k.removeprefix("cmdstat_"): (v["calls"], v["usec"]) for k, v in stats.items()},
        }

    @staticmethod
    def per_job(before: dict, after: dict, jobs: float, idle: dict | None = None, seconds: float = 0) -> dict:
        """What changed from `before` to `after`, per job; less, with `idle` (per second), what the stack does
        anyway over the `seconds` the jobs took (heartbeats, kombu's polling: bench noise, not per-job cost)."""
        idle_commands = idle["commands"] if idle else {}
        commands = {}
        for name, (calls, usec) in after["commands"].items():
            was = before["commands"].get(name, (0, 0))
            anyway = idle_commands.get(name, (0, 0))
            calls, usec = calls - was[0] - anyway[0] * seconds, usec - was[1] - anyway[1] * seconds
            if calls > 0:
                commands[name] = (calls / jobs, usec / jobs)
        result = {
            k: (after[k] - before[k] - (idle[k] * seconds if idle else 0)) / jobs
            for k in ("redis_cpu", "api_cpu", "worker_cpu")
        }
        result["commands"] = commands
        return result


@contextlib.contextmanager
def _profiled(folder: Path | None, name: str, pids: list[int]) -> Iterator[None]:
    """With a `folder`, py-spy samples these processes meanwhile: folded stacks, one file per process."""
    if folder is None:
        yield
        return
    beside = Path(sys.executable).with_name("py-spy")  # installed in this environment, or on the PATH
    spy_command = str(beside) if beside.exists() else "py-spy"
    spies = [
        subprocess.Popen(
            [
                spy_command,
                "record",
                "-p",
                str(pid),
                "-f",
                "raw",
                "-o",
                str(folder / f"{name}-{pid}.txt"),
                "--nonblocking",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for pid in pids
    ]
    try:
        yield
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)
        for spy in spies:
            spy.wait(timeout=60)


def measure(
    tree: str, sentences: list[str], workdir: Path, model: Path, profile: Path | None = None, shapes: int = 3
) -> dict[str, dict]:
    """Both shapes through the service of checkout `tree`: the per-job costs of each (with `profile`, py-spy's
    samples of the API and worker processes go there)."""
    broker, cache = RedisServer().start(), RedisServer(policy="allkeys-lru").start()
    settings = stack_settings(model, broker.url, cache.url, tokens=8)
    name = Path(tree).name
    api = ApiProcess(settings, workdir / f"api-{name}.log", extra_env={"PYTHONPATH": tree})
    # `env -C`: the worker runs from that checkout (`python -m` looks in its working directory first)
    worker = WorkerProcess(settings, workdir / f"worker-{name}.log", launcher=["env", "-C", tree, f"PYTHONPATH={tree}"])
    try:
        api.start(workers=2, threads=8)
        worker.start(wait_ready=True, timeout=300)
        client = redis.Redis.from_url(broker.url, decode_responses=True)
        meter = Meter(client, api, worker)
        clients = threading.local()

        def post(path: str, body: dict) -> dict:
            if not hasattr(clients, "session"):  # each client on its own keep-alive connection
                clients.session = requests.Session()
            return clients.session.post(f"{api.url}{path}", json=body, timeout=60).json()

        def submit(body: dict) -> str:
            return post("/v1/jobs", body)["id"]

        def one_sentence_jobs() -> int:
            with ThreadPoolExecutor(16) as pool:
                ids = list(pool.map(submit, [{"text": s} for s in sentences]))
            _wait_all(api.url, ids, poll=0.5)
            return len(ids)

        def one_big_job() -> int:
            _wait_all(api.url, [submit({"texts": sentences})], poll=0.5)
            return 1

        def translate_calls() -> int:  # /v1/translate: submit and wait in the API (its polling counts)
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda s: post("/v1/translate", {"text": s}), sentences))
            return len(sentences)

        results = {}
        one_sentence_jobs()  # warm up: imports, connections, the model's first batches
        before = meter.read()
        time.sleep(IDLE_SECONDS)
        idle = Meter.per_job(before, meter.read(), IDLE_SECONDS)  # what the stack does anyway, per second
        for shape, run in (
            (f"{len(sentences)} one-sentence jobs", one_sentence_jobs),
            (f"one job of {len(sentences)} sentences", one_big_job),
            (f"{len(sentences)} /v1/translate calls", translate_calls),
        )[:shapes]:
            redis.Redis.from_url(cache.url).flushall()
            before, start = meter.read(), time.monotonic()
            with _profiled(profile, f"{name}-{len(results)}", _api_pids(api)[1:] + worker.child_pids()):
                jobs = run()
            results[shape] = Meter.per_job(before, meter.read(), jobs)
            results[shape]["less idle"] = Meter.per_job(before, meter.read(), jobs, idle, time.monotonic() - start)
        results["(idle stack, per second)"] = idle
        return results
    finally:
        worker.stop()
        api.stop()
        broker.stop()
        cache.stop()


def main() -> None:
    parser = arguments(__doc__, workload="optional")
    parser.add_argument("--jobs", type=int, default=64, help="jobs (and sentences of the big job)")
    parser.add_argument("--baseline", default="", help="another checkout to measure first, as the baseline")
    parser.add_argument("--profile", default="", help="a folder for py-spy's samples of the API and worker (raw)")
    parser.add_argument("--shapes", type=int, default=3, help="how many of the shapes to run (1: one-sentence jobs)")
    args = parse(parser)
    sentences = load_workload(args.workload or str(ROOT / "bench/data/zh_sentences.txt"), args.jobs)
    from worker.translation.model.offline_model import make_test_model

    trees = ([args.baseline] if args.baseline else []) + [str(ROOT)]
    with tempfile.TemporaryDirectory(prefix="transq-bench-") as tmp:
        workdir = Path(tmp)
        model = make_test_model(workdir / "model")
        profile = Path(args.profile) if args.profile else None
        if profile:
            profile.mkdir(parents=True, exist_ok=True)
        measured = {tree: measure(tree, sentences, workdir, model, profile, args.shapes) for tree in trees}
    rows, breakdown = [], []
    for tree, shapes in measured.items():
        label = "baseline" if tree == args.baseline else "this tree"
        for shape, r in shapes.items():
            commands = r["commands"]
            lua = sum(calls for name, (calls, _) in commands.items() if name in ("evalsha", "eval", "fcall"))
            rows.append(
                [
                    label,
                    shape,
                    sum(calls for calls, _ in commands.values()),
                    lua,
                    sum(usec for _, usec in commands.values()) / 1000,
                    r["redis_cpu"] * 1000,
                    r["api_cpu"] * 1000,
                    r["worker_cpu"] * 1000,
                ]
            )
            top = sorted(commands.items(), key=lambda item: -item[1][0])[:TOP]
            breakdown.append(f"{label}, {shape}: " + ", ".join(f"{n} {c:.1f}" for n, (c, _) in top))
            if "less idle" in r:
                less = sum(calls for calls, _ in r["less idle"]["commands"].values())
                breakdown.append(f"{label}, {shape}, less the idle stack's: {less:.1f} commands a job")
    print(f"\nper job, tiny copy model, outputs of 8 tokens; {machine()}\n")
    headers = [
        "tree",
        "shape",
        "redis cmds",
        "lua calls",
        "redis cmd ms",
        "redis CPU ms",
        "API CPU ms",
        "worker CPU ms",
    ]
    print(table(headers, rows))
    print("\nRedis commands per job, most called first:")
    print("\n".join(breakdown))


if __name__ == "__main__":
    main()
