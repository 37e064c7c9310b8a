"""Settings for test stacks; the processes themselves are transq_cli.processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.settings import Settings
from transq_cli.processes import ROOT, ApiProcess, WorkerProcess

__all__ = ["ROOT", "ApiProcess", "WorkerProcess", "stack_settings"]


def stack_settings(redis_url: str, model_dir: str | Path, **overrides: Any) -> Settings:
    """Settings for tests: small outputs so a random model is quick, short leases and heartbeats."""
    values: dict[str, Any] = dict(
        redis_url=redis_url,
        cache_url=redis_url,
        model=str(model_dir),
        max_new_tokens=8,
        heartbeat_seconds=0.5,
        lease_seconds=3.0,
        rate_limit="",
        log_level="INFO",
    )
    values.update(overrides)
    return Settings(**values)
