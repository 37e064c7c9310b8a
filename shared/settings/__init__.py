"""The one settings object: every knob is a TRANSQ_* environment variable.

Its fields are grouped by concern in this package's modules (runtime: Redis and the model; limits: inputs,
times, callbacks, the API; memories: translation memories) and read together as one `Settings`; environment.py reads them from the
environment (secrets from files), checks.py checks them when a Settings is built, and `transq settings`
prints them all as the manual's table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from shared.settings.checks import check
from shared.settings.environment import environment_of, environment_values
from shared.settings.limits import LimitSettings
from shared.settings.memories import MemorySettings
from shared.settings.runtime import RuntimeSettings


# The groups' fields in order: a dataclass takes its bases' fields from the last base to the first.
@dataclass(frozen=True)
class Settings(MemorySettings, LimitSettings, RuntimeSettings):
    """Configuration read once from the environment (prefix TRANSQ_)."""

    @property
    def effective_cache_url(self) -> str:
        return self.cache_url or self.redis_url

    def __post_init__(self) -> None:
        check(self)

    @property
    def worker_silence_seconds(self) -> float:
        """How long a worker may go without a heartbeat before it counts as gone: three missed beats."""
        return self.heartbeat_seconds * 3

    @property
    def api_key_list(self) -> list[str]:
        return [key.strip() for key in self.api_keys.split(",") if key.strip()]

    @property
    def compat_api_list(self) -> list[str]:
        return [name.strip().lower() for name in self.compat_apis.split(",") if name.strip()]

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: Any) -> Settings:
        """Every field from TRANSQ_<NAME> or the file TRANSQ_<NAME>_FILE names (a secret); overrides win."""
        return cls(**{**environment_values(cls, os.environ if environ is None else environ), **overrides})

    def as_env(self) -> dict[str, str]:
        """The settings as TRANSQ_* variables, for child processes."""
        return environment_of(self)
