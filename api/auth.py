"""Optional API keys (constant-time comparison, never logged) and per-client rate limits."""

from __future__ import annotations

import hashlib
import hmac

from flask import Flask, g, request
from flask_limiter import Limiter

from api.errors import Unauthorized
from shared.settings import Settings

# Paths that answer without a key and without counting against a rate limit.
_OPEN_PREFIXES = ("/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/static")


def _is_open(path: str) -> bool:
    return path == "/" or path.startswith(_OPEN_PREFIXES)


def presented_key() -> str:
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.headers.get("X-API-Key", "").strip()


def client_id() -> str:
    """Who a request counts as: its API key's digest when it has one, else its address."""
    key = presented_key()
    if key:
        return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]
    return "addr:" + (request.remote_addr or "unknown")


def init_app(app: Flask, settings: Settings) -> None:
    keys = [k.encode() for k in settings.api_key_list]

    @app.before_request
    def _require_key() -> None:
        if not keys or _is_open(request.path):
            return
        given = presented_key().encode()
        # Compare with every key, always, so timing says nothing about which one matched.
        matched = False
        for key in keys:
            matched |= hmac.compare_digest(given, key)
        if not given or not matched:
            raise Unauthorized("a valid API key is required (Authorization: Bearer <key> or X-API-Key)")
        g.client = client_id()

    if settings.rate_limit:
        limiter = Limiter(
            key_func=client_id,
            app=app,
            default_limits=[settings.rate_limit],
            storage_uri=settings.redis_url,
            storage_options={
                "socket_timeout": settings.redis_socket_timeout,
                "socket_connect_timeout": settings.redis_socket_timeout,
            },
            key_prefix=f"{settings.key_prefix}rate",
            headers_enabled=False,
            swallow_errors=True,
            default_limits_exempt_when=lambda: _is_open(request.path),
        )
        app.extensions["transq_limiter"] = limiter
