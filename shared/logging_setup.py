"""Logging as text or one JSON object per line, with the job id when there is one."""

from __future__ import annotations

import contextvars
import json
import logging
import sys

current_job_id: contextvars.ContextVar[str] = contextvars.ContextVar("current_job_id", default="")


class _JobIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "job_id", ""):
            record.job_id = current_job_id.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if getattr(record, "job_id", ""):
            entry["job_id"] = record.job_id
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(log_format: str = "text", level: str = "INFO") -> None:
    """Install one handler on the root logger (idempotent)."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(job_id)s] %(message)s"))
    handler.addFilter(_JobIdFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_transq", False):
            root.removeHandler(old)
    handler._transq = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())
