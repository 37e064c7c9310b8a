"""Liveness, readiness, and the language pairs served."""

from __future__ import annotations

import redis
from flask import Blueprint

from api.current import services
from api.errors import error_response
from shared.contract import Health, Readiness, ServedLanguages
from shared.errors import ErrorCode

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return Health().model_dump()


@bp.get("/readyz")
def readyz():  # type: ignore[no-untyped-def]
    """Ready when Redis answers and at least one worker has its model loaded; each served pair's live
    workers are listed (a pair with none still accepts jobs: they wait for its workers)."""
    try:
        services().redis.ping()
        pairs = services().routes.pairs()
    except redis.RedisError:
        return error_response(ErrorCode.UNAVAILABLE, "the broker Redis does not answer", 5)
    workers = {name: sum(pair.workers.values()) for name, pair in pairs.items()}
    if not any(workers.values()):
        return error_response(ErrorCode.UNAVAILABLE, "no worker has reported its model loaded yet", 5)
    # `decoding`: live workers by decoding loop; "generate" means a model whose generation config
    # transq's loop does not reproduce (the worker logs which field), at a large cost in throughput.
    decoding = dict(services().routes.decoding)
    return Readiness(workers=sum(workers.values()), pairs=workers, decoding=decoding).model_dump()


@bp.get("/v1/languages")
def languages():  # type: ignore[no-untyped-def]
    """The served language pairs, each with its models and live workers (from their heartbeats)."""
    pairs = services().routes.pairs()
    return ServedLanguages(pairs=[pairs[name].view() for name in sorted(pairs)]).model_dump()
