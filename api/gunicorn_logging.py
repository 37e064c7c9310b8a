"""gunicorn's own log lines (its error log and the access log) in transq's format: with
TRANSQ_LOG_FORMAT=json every line gunicorn writes is one JSON object, an access line with its fields."""

from __future__ import annotations

from gunicorn import glogging

from shared.logging_setup import JsonFormatter
from shared.settings import Settings


class GunicornLogger(glogging.Logger):
    def setup(self, cfg) -> None:  # type: ignore[no-untyped-def]
        super().setup(cfg)
        if Settings.from_env().log_format == "json":
            for logger in (self.error_log, self.access_log):
                for handler in logger.handlers:
                    handler.setFormatter(JsonFormatter())
