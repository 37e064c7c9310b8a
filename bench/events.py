"""Progressive results: GET /v1/jobs/<id>/events against polling GET /v1/jobs/<id>, in the same run.

1. Events served: `--clients` concurrent SSE clients each read the whole stream of a finished job of
   `--sentences` sentences from one API process (one gunicorn gevent worker); events per second over all
   clients, against the same clients polling GET /v1/jobs/<id> (requests per second) for as long.
2. Submit to first sentence: a job of `--latency-sentences` sentences (tiny test model, outputs forced to
   --tokens tokens, one worker) followed by its events, against polling it: when its first translated
   sentence is in the client's hands (with polling: when the job's result is, at its end), when polling first
   shows progress, and when the job is done.

    python -m bench.events [--clients 8] [--sentences 2000] [--latency-sentences 200] [--seconds 5]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import threading
import time
from pathlib import Path

import requests

from bench.common import arguments, machine, parse, stack_settings, table
from bench.takeover import tiny_model
from devstack.processes import ApiProcess, WorkerProcess
from devstack.redis_server import RedisServer
from shared.store.backends import Backends
from shared.store.job_events import Sentences
from shared.store.job_record import Job, new_job_id, utc_now
from shared.store.job_status import JobStatus
from transq_cli.client import TransqClient, server_sent_events

log = logging.getLogger("bench.events")


def finished_job(backends: Backends, sentences: int) -> str:
    """A succeeded job of `sentences` sentences, stored as the API stores one the cache answered whole: its
    stream holds a `sentence` event per sentence and its `progress`."""
    translations = {i: f"Sentence number {i} of the benchmark, translated." for i in range(sentences)}
    job = Job(
        id=new_job_id(),
        status=JobStatus.SUCCEEDED,
        texts=[],
        model="bench",
        created_at=utc_now(),
        sentences_total=sentences,
        sentences_done=sentences,
        result=[" ".join(translations.values())],
    )
    backends.store.create(job, cached=Sentences(translations))
    return job.id


def read_stream(url: str, job_id: str) -> int:
    with requests.get(f"{url}/v1/jobs/{job_id}/events", stream=True, timeout=60) as response:
        return sum(1 for _ in server_sent_events(response.iter_lines(decode_unicode=True)))


def concurrently(clients: int, work) -> float:  # type: ignore[no-untyped-def]
    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started


def served(api: ApiProcess, backends: Backends, args: argparse.Namespace) -> list[list[object]]:
    jobs = [finished_job(backends, args.sentences) for _ in range(args.clients)]
    counts = [0] * args.clients

    def stream(n: int) -> None:
        while time.monotonic() < deadline:
            counts[n] += read_stream(api.url, jobs[n])

    deadline = time.monotonic() + args.seconds
    seconds = concurrently(args.clients, stream)
    polls = [0] * args.clients

    def poll(n: int) -> None:
        session = requests.Session()
        while time.monotonic() < deadline:
            session.get(f"{api.url}/v1/jobs/{jobs[n]}", timeout=60).raise_for_status()
            polls[n] += 1

    deadline = time.monotonic() + args.seconds
    poll_seconds = concurrently(args.clients, poll)
    return [
        ["events (SSE)", args.clients, sum(counts), seconds, sum(counts) / seconds],
        ["polling GET /v1/jobs/<id> (baseline)", args.clients, sum(polls), poll_seconds, sum(polls) / poll_seconds],
    ]


def latency(api: ApiProcess, args: argparse.Namespace, tag: str, follow: bool) -> list[float]:
    client = TransqClient(api.url)
    texts = ["".join(f"{tag}第{i}句话的内容。" for i in range(args.latency_sentences))]
    started = time.monotonic()
    job_id = client.submit(texts)["id"]
    first_sentence = first_progress = done = 0.0
    if follow:
        for kind, data in client.events(job_id):
            now = time.monotonic() - started
            if kind == "sentence" and not first_sentence:
                first_sentence = now
            if kind == "progress" and data["sentences_done"] and not first_progress:
                first_progress = now
            if kind == "done":
                done = now
    else:
        while True:
            job = client.job(job_id)
            now = time.monotonic() - started
            if job["progress"]["sentences_done"] and not first_progress:
                first_progress = now
            if job["status"] == "succeeded":
                done = first_sentence = now  # polling hands out no translation before the result
                break
            time.sleep(0.1)
    return [first_sentence, first_progress, done]


def main() -> None:
    parser = arguments(__doc__, tokens=8)
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients of the one API process")
    parser.add_argument("--sentences", type=int, default=2000, help="sentences (events) of each streamed job")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each mode of part 1 runs")
    parser.add_argument("--latency-sentences", type=int, default=200)
    parser.add_argument("--batch", type=int, default=16, help="TRANSQ_MAX_BATCH_SENTENCES of part 2's worker")
    parser.add_argument("--rounds", type=int, default=3, help="jobs per mode in part 2 (the median is shown)")
    args = parse(parser)
    with tempfile.TemporaryDirectory(prefix="transq-bench-") as tmp:
        broker = RedisServer().start()
        settings = stack_settings(
            tiny_model(), broker.url, broker.url, tokens=args.tokens, max_batch_sentences=args.batch
        )
        api = ApiProcess(settings, Path(tmp) / "api.log")
        worker = WorkerProcess(settings, Path(tmp) / "worker.log", name="w1")
        try:
            api.start(workers=1)
            log.info("part 1: %d clients for %.0f s, SSE then polling", args.clients, args.seconds)
            rows = served(api, Backends.connect(settings), args)
            worker.start(timeout=300)
            measured = {True: [], False: []}
            for n in range(args.rounds):
                for follow in (True, False):
                    measured[follow].append(latency(api, args, f"{n}{'事件' if follow else '轮询'}", follow))
        finally:
            worker.stop()
            api.stop()
            broker.stop()
    print(f"\none API process (gunicorn, 1 gevent worker), Redis on loopback; {machine()}\n")
    print(table(["mode", "clients", "events / requests", "seconds", "per second"], rows))
    print(f"\na job of {args.latency_sentences} sentences, tiny test model, one worker, batches of {args.batch}; ")
    print(f"median of {args.rounds} jobs per mode, seconds from submission\n")
    median = {f: [sorted(col)[len(col) // 2] for col in zip(*measured[f])] for f in measured}
    print(
        table(
            ["client", "first translated sentence", "first progress", "job done"],
            [["events (SSE)", *median[True]], ["polling every 0.1 s (baseline)", *median[False]]],
        )
    )


if __name__ == "__main__":
    main()
