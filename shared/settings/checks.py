"""The settings' own checks, made when a Settings is built: every value in its range, choices among their
choices, lists and pairs well formed; a bad one is a ValueError naming its TRANSQ_ variable."""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from shared.callback_hosts import parse_host_list

if TYPE_CHECKING:
    from shared.settings import Settings


MAX_KEY_PREFIX = 64
# What a committed example holds where a credential goes (deploy/kubernetes's `change-me`): never a real one.
PLACEHOLDER = re.compile(
    r"(change|replace|set)[-_ .]?(me|it|this)|placeholder|example|^(secret|password|x+|\*+)$", re.I
)
# A sentence's confidence is a mean log-probability: 0 at best, about -11 for a random choice among opus-mt's
# 65,001 pieces; a quality gate's `min_confidence` lies in this range (TRANSQ_MIN_CONFIDENCE may also be -inf: off).
CONFIDENCE_RANGE = (-100.0, 0.0)


def check(settings: Settings) -> None:
    """Refuse values the service cannot run with, at start, naming the variable."""
    choices = {"device": ("auto", "cpu", "cuda"), "quantize": ("int8", "none"), "log_format": ("text", "json")}
    for name, allowed in choices.items():
        if getattr(settings, name) not in allowed:
            raise ValueError(f"TRANSQ_{name.upper()}={getattr(settings, name)!r}: expected one of {', '.join(allowed)}")
    if not settings.task_soft_time_limit < settings.task_time_limit < settings.visibility_timeout:
        raise ValueError(
            "TRANSQ_TASK_SOFT_TIME_LIMIT < TRANSQ_TASK_TIME_LIMIT < TRANSQ_VISIBILITY_TIMEOUT must hold "
            f"(got {settings.task_soft_time_limit}, {settings.task_time_limit}, {settings.visibility_timeout}): a job must "
            "fail by its limits before its message is delivered again"
        )
    for item in filter(None, settings.redis_sentinels.split(",")):
        if not re.fullmatch(r"\s*(\[[0-9a-fA-F:]+\]|[^\s:\[\]]+):\d{1,5}\s*", item):
            raise ValueError(f"TRANSQ_REDIS_SENTINELS={settings.redis_sentinels!r}: expected host:port,host:port")
    _check_key_prefix(settings.key_prefix)
    low, high = CONFIDENCE_RANGE
    if not (settings.min_confidence == float("-inf") or low <= settings.min_confidence <= high):
        raise ValueError(
            f"TRANSQ_MIN_CONFIDENCE={settings.min_confidence!r}: expected -inf (off) or {low:g} to {high:g}"
        )
    if settings.languages and not re.fullmatch(r"[A-Za-z]{2,3}-[A-Za-z]{2,3}", settings.languages):
        raise ValueError(f"TRANSQ_LANGUAGES={settings.languages!r}: expected a pair such as zh-en")
    if not re.fullmatch(
        r"(\s*[^=,\s]+\s*=\s*\d+\s*/\s*\d+\s*)?(,(\s*[^=,\s]+\s*=\s*\d+\s*/\s*\d+\s*)?)*", settings.quota_overrides
    ):
        raise ValueError(
            f"TRANSQ_QUOTA_OVERRIDES={settings.quota_overrides!r}: expected <client>=<per day>/<per month>,..."
        )
    unknown = set(settings.compat_api_list) - {"deepl", "libretranslate"}
    if unknown:
        raise ValueError(f"TRANSQ_COMPAT_APIS={settings.compat_apis!r}: expected deepl, libretranslate or both")
    if settings.public_url and not re.fullmatch(r"https?://[^\s/?#@]+(/[^\s?#]*)?", settings.public_url):
        raise ValueError(
            f"TRANSQ_PUBLIC_URL={settings.public_url!r}: expected http(s)://host[:port][/path], without a query or fragment"
        )
    if settings.route and not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,62}", settings.route):
        raise ValueError(
            f"TRANSQ_ROUTE={settings.route!r}: expected at most 63 lowercase letters, digits, '.', '_' or '-' "
            "(such as zh-en), starting with a letter or digit"
        )
    if settings.default_pair and not re.fullmatch(r"[a-z]{2,3}-[a-z]{2,3}", settings.default_pair):
        raise ValueError(f"TRANSQ_DEFAULT_PAIR={settings.default_pair!r}: expected a pair such as zh-en")
    positive = (
        "max_batch_sentences",
        "max_batch_tokens",
        "max_round_sentences",
        "max_new_tokens",
        "max_input_tokens",
        "max_body_bytes",
        "max_document_bytes",
        "max_texts",
        "max_chars",
        "max_sentences",
        "max_sentence_chars",
        "glossary_max_terms",
        "glossary_max_term_chars",
        "glossary_ttl",
        "max_deliveries",
        "lease_seconds",
        "heartbeat_seconds",
        "read_timeout",
        "request_timeout",
        "body_min_rate",
        "header_bytes",
        "document_ttl",
        "document_time_limit",
        "document_memory_mb",
        "document_lease_seconds",
        "callback_deadline",
        "callback_timeout",
        "callback_retry_seconds",
        "callback_concurrency",
        "callback_per_receiver",
        "callback_per_owner",
        "event_stream_seconds",
        "event_idle_seconds",
        "event_heartbeat_seconds",
    )
    for name in positive:
        if getattr(settings, name) <= 0:
            raise ValueError(f"TRANSQ_{name.upper()}={getattr(settings, name)!r}: must be above 0")
    for which in ("http", "private"):
        name = f"callback_allow_{which}_hosts"
        parse_host_list(getattr(settings, name), f"TRANSQ_{name.upper()}={getattr(settings, name)!r}")
    if 0 < len(settings.callback_secret) < 16:
        raise ValueError("TRANSQ_CALLBACK_SECRET: at least 16 characters (or empty: callbacks off)")
    if settings.event_streams_per_key < 0:
        raise ValueError(f"TRANSQ_EVENT_STREAMS_PER_KEY={settings.event_streams_per_key}: 0 (no limit) or more")
    if settings.connections_per_client < 0:
        raise ValueError(f"TRANSQ_CONNECTIONS_PER_CLIENT={settings.connections_per_client}: 0 (no limit) or more")
    _check_production(settings)
    if settings.request_timeout < settings.read_timeout:
        raise ValueError(
            f"TRANSQ_REQUEST_TIMEOUT={settings.request_timeout:g} must be at least "
            f"TRANSQ_READ_TIMEOUT={settings.read_timeout:g} (a request's headers must fit in it)"
        )


def _check_key_prefix(prefix: str) -> None:
    """Every Redis key and Celery queue name starts with it: printable, without whitespace, of a sane length."""
    bad = [c for c in prefix if c.isspace() or unicodedata.category(c).startswith("C")]
    if bad or len(prefix) > MAX_KEY_PREFIX:
        raise ValueError(
            f"TRANSQ_KEY_PREFIX={prefix!r}: expected at most {MAX_KEY_PREFIX} characters, none of them whitespace "
            "or a control character (such as transq: or team-a:transq:)"
        )


def _check_production(settings: Settings) -> None:
    """TRANSQ_PRODUCTION: API keys required, and no credential a placeholder (the values are never shown)."""
    if not settings.production:
        return
    problems = [] if settings.api_key_list else ["TRANSQ_API_KEYS is empty (anyone could use the API)"]
    secrets = {
        "TRANSQ_API_KEYS": settings.api_key_list,
        "TRANSQ_CALLBACK_SECRET": [settings.callback_secret],
        "TRANSQ_METRICS_TOKEN": [settings.metrics_token],
        "TRANSQ_KEY_ID_SECRET": [settings.key_id_secret],
        "TRANSQ_REDIS_URL": [unquote(urlsplit(settings.redis_url).password or "")],
        "TRANSQ_CACHE_URL": [unquote(urlsplit(settings.cache_url).password or "")],
    }
    problems += [
        f"{name} holds a placeholder" for name, values in secrets.items() if any(map(PLACEHOLDER.search, values))
    ]
    if problems:
        raise ValueError(
            "TRANSQ_PRODUCTION=1: refusing to start: " + "; ".join(problems) + " (set real ones: docs/deployment.md, "
            '"Secrets")'
        )
