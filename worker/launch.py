"""The worker container's command, `python -m worker.launch`: `celery worker` with concurrency 1 and a
node name that says which container it is (`transq-<container id>@<host>`: under host networking every
container has the host's name), without Celery's banner when logs are JSON (every line is then JSON).
Extra arguments go to `celery worker` as they are."""

from __future__ import annotations

import secrets
import socket
import sys

from shared.settings import Settings
from worker.container import container_id


def node_name(mountinfo: str | None = None) -> str:
    return f"transq-{container_id(mountinfo) or secrets.token_hex(3)}@{socket.gethostname()}"


def celery_argv(settings: Settings, extra: list[str]) -> list[str]:
    quiet = ["--quiet"] if settings.log_format == "json" else []
    return [*quiet, "worker", "--concurrency", "1", "--loglevel", settings.log_level, "-n", node_name(), *extra]


def main() -> None:
    from worker.celery_app import app

    app.start(argv=celery_argv(Settings.from_env(), sys.argv[1:]))


if __name__ == "__main__":
    main()
