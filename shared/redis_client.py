"""Redis connections with short timeouts, so a dead server means a quick error, never a hang."""

from __future__ import annotations

import redis

from shared.settings import Settings


def broker_redis(settings: Settings, decode: bool = True) -> redis.Redis:
    """The broker and job store (`decode` False: bytes, for compressed documents)."""
    return redis.Redis.from_url(
        settings.redis_url,
        socket_timeout=settings.redis_socket_timeout,
        socket_connect_timeout=settings.redis_socket_timeout,
        health_check_interval=30,
        decode_responses=decode,
    )


def cache_redis(settings: Settings) -> redis.Redis:
    """The sentence cache: even shorter timeouts, since a miss is always an answer."""
    return redis.Redis.from_url(
        settings.effective_cache_url,
        socket_timeout=settings.cache_socket_timeout,
        socket_connect_timeout=settings.cache_socket_timeout,
        decode_responses=True,
    )


def redact_url(url: str) -> str:
    """The URL with any password replaced, for logs."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user + ':' if user else ':'}***@{host}"
