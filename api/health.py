"""Liveness and readiness."""

from __future__ import annotations

import redis
from flask import Blueprint

from api import services
from api.errors import error_response

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return {"status": "ok"}


@bp.get("/readyz")
def readyz():  # type: ignore[no-untyped-def]
    """Ready when Redis answers and at least one worker has its model loaded."""
    try:
        services().redis.ping()
        workers = services().registry.ready_count()
    except redis.RedisError:
        return error_response(503, "unavailable", "the broker Redis does not answer", 5)
    if workers == 0:
        return error_response(503, "unavailable", "no worker has reported its model loaded yet", 5)
    return {"status": "ready", "workers": workers}
