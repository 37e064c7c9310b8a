"""Settings for test stacks; the processes themselves are devstack.processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from devstack.processes import ROOT, ApiProcess, DocumentStageProcess, WorkerProcess
from shared.settings import Settings

__all__ = ["ROOT", "ApiProcess", "DocumentStageProcess", "WorkerProcess", "stack_settings"]


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
