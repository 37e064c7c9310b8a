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
    """Ready when this API can accept jobs: the broker Redis answers. Jobs wait in their queue for workers,
    so none need be live (an autoscaler may have scaled them to zero, and a queued job is what wakes them):
    each served pair's live workers are listed; /readyz/workers tells whether any is."""
    try:
        return _readiness().model_dump()
    except redis.RedisError:
        return error_response(ErrorCode.UNAVAILABLE, "the broker Redis does not answer", 5)


@bp.get("/readyz/workers")
def workers_ready():  # type: ignore[no-untyped-def]
    """Ready when at least one worker has its model loaded and beats (also in /metrics:
    transq_workers_ready); 503 otherwise."""
    try:
        readiness = _readiness()
    except redis.RedisError:
        return error_response(ErrorCode.UNAVAILABLE, "the broker Redis does not answer", 5)
    if not readiness.workers:
        return error_response(ErrorCode.UNAVAILABLE, "no worker has reported its model loaded yet", 5)
    return readiness.model_dump()


def _readiness() -> Readiness:
    services().redis.ping()
    pairs = services().routes.pairs()
    workers = {name: sum(pair.workers.values()) for name, pair in pairs.items()}
    # `decoding`: live workers by decoding loop; "generate" means a model whose generation config
    # transq's loop does not reproduce (the worker logs which field), at a large cost in throughput.
    decoding = dict(services().routes.decoding)
    return Readiness(workers=sum(workers.values()), pairs=workers, decoding=decoding)


@bp.get("/v1/languages")
def languages():  # type: ignore[no-untyped-def]
    """The served language pairs, each with its models and live workers (from their heartbeats)."""
    pairs = services().routes.pairs()
    return ServedLanguages(pairs=[pairs[name].view() for name in sorted(pairs)]).model_dump()
