"""The transq HTTP API: `gunicorn "api:create_app()"`. Never imports torch or transformers.

Nothing outside this folder imports it. Importing `api` builds nothing and loads neither Celery nor the
app's services: create_app() does."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask

log = logging.getLogger(__name__)


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Build the app; `test_config` may hold a Settings object under "SETTINGS"."""
    import redis
    from flask import Flask
    from kombu.exceptions import OperationalError

    from api.errors import error_response, register_error_handlers
    from shared.errors import ErrorCode
    from shared.logging_setup import configure_logging
    from shared.settings import Settings
    from shared.store.backends import Services
    from shared.store.key_ids import KeyIds
    from shared.store.redis_client import describe_broker

    app = Flask(__name__)
    settings: Settings = (test_config or {}).get("SETTINGS") or Settings.from_env()
    configure_logging(settings.log_format, settings.log_level)
    app.config.update(MAX_CONTENT_LENGTH=settings.max_body_bytes, JSON_SORT_KEYS=False)
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.json.sort_keys = False  # type: ignore[attr-defined]
    if test_config:
        app.config.update({k: v for k, v in test_config.items() if k != "SETTINGS"})
    app.extensions["transq"] = Services.start(settings)
    app.extensions["celery"] = app.extensions["transq"].celery

    register_error_handlers(app)

    @app.errorhandler(redis.RedisError)
    @app.errorhandler(OperationalError)
    def _redis_down(exc: Exception):  # type: ignore[no-untyped-def]
        log.warning("broker Redis unavailable: %s", exc)
        return error_response(ErrorCode.UNAVAILABLE, "the job store is unavailable; try again later", 5)

    from api import (
        auth,
        compat,
        detect,
        glossaries,
        health,
        jobs,
        memories,
        metrics,
        openapi,
        security_headers,
        translate,
        usage,
        web,
    )
    from api.documents import blueprint as documents

    services = app.extensions["transq"]
    auth.init_app(app, settings, services.redis, KeyIds(services.redis, services.keys, settings.key_id_secret))
    security_headers.init_app(app)
    blueprints = (
        jobs.bp,
        documents.bp,
        translate.bp,
        detect.bp,
        usage.bp,
        health.bp,
        metrics.bp,
        openapi.bp,
        web.bp,
    )
    for blueprint in blueprints:
        app.register_blueprint(blueprint)
    app.register_blueprint(glossaries.bp)
    app.register_blueprint(memories.bp)
    compat.init_app(app, settings)
    log.info("transq API ready: broker %s, model %s", describe_broker(settings), settings.model)
    return app
