"""The worker container's command, `python -m worker.translation`: `celery worker` with concurrency 1 and a
node name that says which container it is (`transq-<container id>@<host>`: under host networking every
container has the host's name), without Celery's banner when logs are JSON (every line is then JSON),
and without Celery's gossip and mingle (workers watching each other's events, and syncing revoked tasks
at start): transq's workers announce themselves in its own registry (shared/store/workers.py) and never
revoke, and gossip's consumer fails on a broker restart ("Error on restarting Gossip"). Extra arguments
go to `celery worker` as they are."""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import time

from shared.settings import Settings
from worker.translation.liveness.worker_id import container_id


def node_name(mountinfo: str | None = None) -> str:
    return f"transq-{container_id(mountinfo) or secrets.token_hex(3)}@{socket.gethostname()}"


def celery_argv(settings: Settings, extra: list[str]) -> list[str]:
    quiet = ["--quiet"] if settings.log_format == "json" else []
    unused = ["--without-gossip", "--without-mingle"]
    return [
        *quiet,
        "worker",
        "--concurrency",
        "1",
        "--loglevel",
        settings.log_level,
        "-n",
        node_name(),
        *unused,
        *extra,
    ]


def _json_say(message: str, stream=sys.__stderr__) -> None:  # type: ignore[no-untyped-def]
    """Celery's `safe_say` (its shutdown notices, written from signal handlers with a raw os.write, not
    through logging), as one JSON line like every other line."""
    line = {"ts": time.strftime("%Y-%m-%dT%H:%M:%S"), "level": "INFO", "logger": "celery.worker", "message": message}
    os.write(stream.fileno(), (json.dumps(line) + "\n").encode())


def main() -> None:
    from worker.translation.celery_app import create_app

    settings = Settings.from_env()
    app = create_app(settings)
    if settings.log_format == "json":
        import celery.apps.worker

        celery.apps.worker.safe_say = _json_say
    app.start(argv=celery_argv(settings, sys.argv[1:]))


if __name__ == "__main__":
    main()
