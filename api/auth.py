"""Optional API keys (constant-time comparison, never logged) and per-client rate limits.

A request counts as its API key only when that key is valid; anything else (no key, a wrong key,
any key while authentication is off) counts as its address, so a made-up key per request cannot
dodge the limit. Failed key checks are limited per address too, so keys cannot be guessed at speed.
"""

from __future__ import annotations

import hmac
import logging
import time

import redis
from flask import Flask, current_app, g, request
from flask_limiter import Limiter
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from shared.errors import RateLimited, Unauthorized
from shared.settings import Settings
from shared.store.key_ids import KeyIds
from shared.store.redis_client import limiter_storage

log = logging.getLogger(__name__)

# Paths that answer without a key and without counting against a rate limit.
_OPEN_PREFIXES = ("/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/static", "/v1/languages")


def _is_open(path: str) -> bool:
    extra = current_app.extensions.get("transq_open_prefixes", ())
    return path == "/" or path.startswith(_OPEN_PREFIXES) or (bool(extra) and path.startswith(extra))


def _is_unlimited(path: str) -> bool:
    """Open, and not among the open paths that still count against the address's rate limit (a keyless
    download serves a whole document: api.compat registers them in app.extensions["transq_limited_prefixes"])."""
    limited = current_app.extensions.get("transq_limited_prefixes", ())
    return _is_open(path) and not (bool(limited) and path.startswith(limited))


def presented_key() -> str:
    """The key a request presents: `Authorization: Bearer`, `X-API-Key`, or where another API it speaks puts
    it (api.compat registers those readers in app.extensions["transq_key_readers"]). Two different keys (say
    a Bearer one and a body's api_key, or two Authorization headers) present none: which client the request
    counts as, and whose data it may see, is not left to the order they are read in."""
    authorization = request.headers.getlist("Authorization")
    found = {value[7:].strip() for value in authorization if value.lower().startswith("bearer ")}
    for reader in current_app.extensions.get("transq_key_readers", ()):
        found.update(key.strip() for key in reader(request))
    found.add(request.headers.get("X-API-Key", "").strip())
    found.discard("")
    return found.pop() if len(found) == 1 else ""


def client_address() -> str:
    return "addr:" + (request.remote_addr or "unknown")


def client_id() -> str:
    """Who a request counts as: its API key's id (shared.store.key_ids) when the key is valid, else its
    address."""
    return g.get("client") or client_address()


def owner_id() -> str:
    """Whose jobs this request may see: its valid key's id; '' when authentication is off."""
    return g.get("client", "")


class FailedAuthLimit:
    """Counts failed key checks per client address in the broker Redis (on `broker`'s connections)."""

    def __init__(self, settings: Settings, broker: redis.Redis):
        self.limit = parse(settings.auth_failure_limit)
        uri, options = limiter_storage(broker)
        storage = storage_from_string(uri, **options)
        self.strategy = FixedWindowRateLimiter(storage)
        self.prefix = f"{settings.key_prefix}authfail"

    def exceeded(self, address: str) -> int:
        """Count one failure; the seconds until the window resets when over the limit, else 0."""
        try:
            if self.strategy.hit(self.limit, self.prefix, address):
                return 0
            reset_at, _ = self.strategy.get_window_stats(self.limit, self.prefix, address)
        except Exception as exc:  # noqa: BLE001 - a broker outage must not lock every client out
            log.warning("could not count a failed key check: %s", exc)
            return 0
        return max(1, int(reset_at - time.time()) + 1)


def refuse_if_failing_too_often(failures: FailedAuthLimit | None) -> None:
    """Count one failed credential check of this request's address; 429 once over TRANSQ_AUTH_FAILURE_LIMIT."""
    retry_after = failures.exceeded(client_address()) if failures else 0
    if retry_after:
        raise RateLimited("too many failed credential checks from this address; try again later", retry_after)


def init_app(app: Flask, settings: Settings, broker: redis.Redis, key_ids: KeyIds) -> None:
    """Check API keys (known by their ids: `key_ids`) and limit rates, counting in the broker Redis on
    `broker`'s connections."""
    keys = [k.encode() for k in settings.api_key_list]
    # A wrong metrics token counts too (api.metrics): a credential guessed at /metrics is still guessed.
    guarded = keys or settings.metrics_token
    failures = FailedAuthLimit(settings, broker) if guarded and settings.auth_failure_limit else None
    app.extensions["transq_auth_failures"] = failures

    @app.before_request
    def _require_key() -> None:
        if not keys or _is_open(request.path):
            return
        given = presented_key().encode()
        # Compare with every key, always, so timing says nothing about which one matched.
        matched = False
        for key in keys:
            matched |= hmac.compare_digest(given, key)
        if given and matched:
            g.client = key_ids.of(given.decode())
            return
        refuse_if_failing_too_often(failures)
        raise Unauthorized("a valid API key is required (Authorization: Bearer <key> or X-API-Key)")

    if settings.rate_limit:
        uri, options = limiter_storage(broker)
        limiter = Limiter(
            key_func=client_id,
            app=app,
            default_limits=[settings.rate_limit],
            storage_uri=uri,
            storage_options=options,
            key_prefix=f"{settings.key_prefix}rate",
            headers_enabled=False,
            swallow_errors=True,
            default_limits_exempt_when=lambda: _is_unlimited(request.path),
        )
        app.extensions["transq_limiter"] = limiter
