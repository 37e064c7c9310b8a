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


# gunicorn's access-log atoms, as fields of a JSON access line.
_ACCESS_FIELDS = {"m": "method", "U": "path", "q": "query", "s": "status", "B": "bytes", "h": "remote", "a": "agent"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.name == "gunicorn.access" and isinstance(record.args, dict):
            atoms = record.args
            entry["message"] = f"{atoms.get('m')} {atoms.get('U')} {atoms.get('s')}"
            for atom, name in _ACCESS_FIELDS.items():
                value = atoms.get(atom)
                if value not in (None, "", "-"):
                    entry[name] = int(value) if name in ("status", "bytes") and str(value).isdigit() else value
            entry["duration_ms"] = round(int(atoms.get("D", 0)) / 1000, 1)
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
    logging.captureWarnings(True)  # a library's warning is a log line too (one JSON object with JSON logs)
