"""Redis connections with short timeouts, so a dead server means a quick error, never a hang.

Every client of the broker/job store and of the cache is made here: from TRANSQ_REDIS_URL /
TRANSQ_CACHE_URL (user, password, db; `rediss://` with TRANSQ_REDIS_CA_FILE or the URL's ssl_ca_certs),
or, with TRANSQ_REDIS_SENTINELS, from the master the sentinels name (the URL then gives user, password,
db and TLS; its host and port are not used). shared.celery_factory builds Celery's broker the same way.

Every connection, the sentinels' too, has TCP keepalive and a user timeout (connection_options): a
connection whose peer lost its TCP state behind a cut (a consumer's, blocked in BRPOP, sends nothing and
so never hears of it) is found dead within a few seconds of the link being usable, not by kombu's own 30 s
"no reply" check, and one whose data goes unacknowledged that long is dropped.

A command is sent again only after a connection error, once (redis-py's default is 10 times after a timeout
too): a command that timed out may have run, and run again it could store a job twice, and a frozen server
held the API's request for 11 timeouts.
"""

from __future__ import annotations

import socket
import ssl
from typing import Any
from urllib.parse import parse_qs, urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel

from shared.settings import Settings
from shared.store.replica_errors import read_no_replicas_as_connection_error

# Probes after this many idle seconds (at least), then every second; three unanswered ones end the connection.
_KEEPALIVE_INTERVAL, _KEEPALIVE_PROBES = 1, 3


def connection_options(timeout: float) -> dict[str, Any]:
    """redis-py's socket options for a connection whose calls may take `timeout` seconds: keepalive probes
    once it has been idle that long (a blocked BRPOP's or WAIT's connection is idle), and TCP_USER_TIMEOUT,
    so unacknowledged data ends it as soon."""
    idle = max(1, round(timeout))
    options: dict[int, int] = {}
    for name, value in (
        ("TCP_KEEPIDLE", idle),
        ("TCP_KEEPINTVL", _KEEPALIVE_INTERVAL),
        ("TCP_KEEPCNT", _KEEPALIVE_PROBES),
        ("TCP_USER_TIMEOUT", (idle + _KEEPALIVE_INTERVAL * _KEEPALIVE_PROBES) * 1000),
    ):
        if hasattr(socket, name):  # Linux has them all; macOS lacks TCP_USER_TIMEOUT
            options[getattr(socket, name)] = value
    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "socket_keepalive": True,
        "socket_keepalive_options": options,
    }


def _once_after_a_connection_error() -> Retry:
    return Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,))


def broker_redis(settings: Settings) -> redis.Redis:
    """The broker and job store (answers decoded; shared.store.document_store reads its compressed data as bytes)."""
    return _client(
        settings,
        settings.redis_url,
        settings.redis_master,
        settings.redis_socket_timeout,
        # A connection idle this long is PINGed before it is used again (a pooled one may have died meanwhile).
        health_check_interval=max(1, round(settings.heartbeat_seconds)),
        decode_responses=True,
    )


def cache_redis(settings: Settings) -> redis.Redis:
    """The sentence cache: even shorter timeouts, since a miss is always an answer."""
    master = _cache_master(settings)
    return _client(settings, settings.effective_cache_url, master, settings.cache_socket_timeout, decode_responses=True)


def _cache_master(settings: Settings) -> str:
    """The cache's master name at the sentinels: TRANSQ_CACHE_MASTER, else the broker's unless
    TRANSQ_CACHE_URL names a server of its own ('' then)."""
    return settings.cache_master if settings.cache_url or settings.cache_master else settings.redis_master


def limiter_storage(broker: redis.Redis) -> tuple[str, dict[str, Any]]:
    """The storage URI and options of rate limits (flask-limiter, limits) on the broker: the connection pool
    of the process's broker client (shared.store.backends), so passwords, TLS and sentinels apply as
    everywhere else, and the process holds one pool."""
    return "redis://", {"connection_pool": broker.connection_pool}


def _client(settings: Settings, url: str, master: str, timeout: float, **options: Any) -> redis.Redis:
    read_no_replicas_as_connection_error()
    options.update(**connection_options(timeout), **tls_options(settings, url), retry=_once_after_a_connection_error())
    if settings.redis_sentinels and master:
        credentials = {k: v for k, v in redis.connection.parse_url(url).items() if k in ("username", "password", "db")}
        sentinel = Sentinel(sentinel_addresses(settings), sentinel_kwargs=connection_options(timeout))
        return sentinel.master_for(master, **credentials, **options, ssl=uses_tls(url))
    return redis.Redis.from_url(url, **options)


def sentinel_addresses(settings: Settings) -> list[tuple[str, int]]:
    """TRANSQ_REDIS_SENTINELS as (host, port) pairs."""
    addresses = []
    for item in settings.redis_sentinels.split(","):
        host, _, port = item.strip().rpartition(":")
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def uses_tls(url: str) -> bool:
    return url.startswith("rediss://")


def ca_file(settings: Settings, url: str) -> str:
    """The CA file verifying a `rediss://` server: the URL's ssl_ca_certs, else TRANSQ_REDIS_CA_FILE."""
    return parse_qs(urlsplit(url).query).get("ssl_ca_certs", [settings.redis_ca_file])[0]


def tls_options(settings: Settings, url: str) -> dict[str, Any]:
    """redis-py options for a `rediss://` URL: the server's certificate is always verified."""
    if not uses_tls(url):
        return {}
    options: dict[str, Any] = {"ssl_cert_reqs": "required"}
    if ca_file(settings, url):
        options["ssl_ca_certs"] = ca_file(settings, url)
    return options


def celery_tls_options(settings: Settings, url: str) -> dict[str, Any] | None:
    """Celery's broker_use_ssl for a `rediss://` URL (None otherwise)."""
    if not uses_tls(url):
        return None
    options: dict[str, Any] = {"ssl_cert_reqs": ssl.CERT_REQUIRED}
    if ca_file(settings, url):
        options["ssl_ca_certs"] = ca_file(settings, url)
    return options


def redact_url(url: str) -> str:
    """The URL with any password replaced, for logs."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user + ':' if user else ':'}***@{host}"


def describe_broker(settings: Settings) -> str:
    """Where the broker is, for logs (never a password)."""
    if settings.redis_sentinels:
        return f"master {settings.redis_master!r} of sentinels {settings.redis_sentinels}"
    return redact_url(settings.redis_url)


def describe_cache(settings: Settings) -> str:
    """Where the cache is, for logs (never a password)."""
    if settings.redis_sentinels and _cache_master(settings):
        return f"master {_cache_master(settings)!r} of sentinels {settings.redis_sentinels}"
    return redact_url(settings.effective_cache_url)
