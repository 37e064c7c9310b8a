"""Callbacks under slow receivers (hostile-client trial, issue 31 item 4): four receivers on 127.0.0.2-5
answer one byte every --every seconds (each byte inside any read timeout), then a healthy receiver's job
becomes final. Measured: how long after that the healthy receiver gets its callback, and how long each
slow attempt was held before the deliverer cut it. The real deliverer process and a real Redis.

    python -m bench.callback_isolation [--every 4] [--deliverer-path DIR] [--scenarios defaults,trial,keys]

--deliverer-path runs the deliverer of another checkout (e.g. the commit before, to compare: its settings
that this one's do not know are ignored). Scenarios: `defaults` (one key's four slow receivers, the
settings' defaults), `trial` (the same with TRANSQ_CALLBACK_CONCURRENCY=4 and TRANSQ_CALLBACK_PER_OWNER=2),
`keys` (TRANSQ_CALLBACK_CONCURRENCY=4, each slow receiver of a key of its own: the limits per key cannot
help, only the bound on each attempt).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import redis

from bench.common import arguments, parse, table
from devstack.callback_deliverer import CallbackDelivererProcess
from devstack.processes import ROOT
from devstack.redis_server import RedisServer
from shared.settings import Settings
from shared.store.jobs import JobStore
from shared.store.keys import Keys
from tests.worker.callbacks.conftest import finished_job
from tests.worker.callbacks.trickle import SlowReceiver, most_at_once

log = logging.getLogger("bench.callback_isolation")
WAIT_AT_MOST = 150.0
SCENARIOS = {
    "defaults": ({}, "one"),
    "trial": ({"callback_concurrency": 4, "callback_per_owner": 2}, "one"),
    "keys": ({"callback_concurrency": 4}, "each"),
}


def scenario(name: str, args: argparse.Namespace, workdir: Path) -> list[object]:
    overrides, owners = SCENARIOS[name]
    broker = RedisServer().start()
    slow = [SlowReceiver(f"127.0.0.{n}", args.every, slow=1000, answer=b"HTTP/1.1 200 OK\r\n\r\n") for n in range(2, 6)]
    healthy = SlowReceiver("127.0.0.1", 0, slow=0)
    settings = Settings(
        redis_url=broker.url,
        callback_secret="bench-callback-secret-0123456789",
        callback_allow_http_hosts="*",
        callback_allow_private_hosts="*",
        **overrides,  # type: ignore[arg-type]
    )
    # the deliverer of the checkout its PYTHONPATH names, run from there
    deliverer = CallbackDelivererProcess(
        settings, workdir / f"{name}.log", {"PYTHONPATH": args.deliverer_path or str(ROOT)}
    )
    deliverer.start()
    try:
        store = JobStore(redis.Redis.from_url(broker.url, decode_responses=True), Keys(settings.key_prefix), 3600, 3600)
        for n, receiver in enumerate(slow):
            finished_job(store, receiver.url, owner="key:attacker" if owners == "one" else f"key:attacker-{n}")
        deadline = time.monotonic() + 30
        while sum(len(r.connections) for r in slow) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the slow attempts under way
        final = time.monotonic()
        finished_job(store, healthy.url, owner="key:victim")
        while not healthy.connections and time.monotonic() - final < WAIT_AT_MOST:
            time.sleep(0.05)
        latency = healthy.connections[0].opened - final if healthy.connections else None
        first = min(c.opened for r in slow for c in r.connections)
        time.sleep(max(0.0, first + settings.callback_timeout + 3 - time.monotonic()))  # past the first cuts
        cuts = [c.closed - c.opened for r in slow for c in r.connections if c.closed is not None]
        return [
            name,
            f"{latency:.2f}" if latency is not None else f"> {WAIT_AT_MOST:.0f}",
            most_at_once([c for r in slow for c in r.connections]),
            len(cuts),
            f"{min(cuts):.1f}-{max(cuts):.1f}" if cuts else "-",
        ]
    finally:
        deliverer.stop()
        for receiver in [*slow, healthy]:
            receiver.stop()
        broker.stop()


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--every", type=float, default=4.0, help="seconds between the slow receivers' bytes")
    parser.add_argument("--deliverer-path", default="", help="PYTHONPATH of the deliverer to run (another checkout)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    args = parse(parser)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [scenario(name, args, Path(tmp)) for name in args.scenarios.split(",")]
    headers = ["scenario", "healthy callback after (s)", "slow attempts at once", "slow attempts cut", "each held (s)"]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
