"""Settings of what a client may ask and how long things take and live: input limits, time limits and
TTLs, completion callbacks and the API's behaviour (a part of the one Settings object, shared.settings)."""

from __future__ import annotations

from dataclasses import dataclass

from shared.settings.environment import setting


@dataclass(frozen=True)
class LimitSettings:
    # Input limits
    max_body_bytes: int = setting(1_048_576, "Largest request body; larger ones get 413 before parsing.")
    max_document_bytes: int = setting(
        4_194_304, "Largest uploaded document (POST /v1/documents); kept compressed for TRANSQ_DOCUMENT_TTL."
    )
    document_ttl: int = setting(
        21_600,
        "Seconds a document's source (compressed) is kept for its job to be translated, and its translated "
        "document (compressed) and finished job are kept after it is made.",
    )
    document_time_limit: int = setting(
        60, "Seconds the document stage may parse or render one document; longer fails `document_too_complex`."
    )
    document_memory_mb: int = setting(
        1024,
        "Memory (address space, MiB) the document stage's process may add to parse or render one document; "
        "more fails `document_too_complex`.",
    )
    document_lease_seconds: float = setting(
        15.0,
        "A document job's lease while the document stage parses or renders it, renewed every third of it; a "
        "job whose stage stops renewing it (killed, stalled, cut off) is sent to another stage, a lost delivery "
        "(TRANSQ_MAX_DELIVERIES).",
    )
    client_storage_bytes: int = setting(
        67_108_864,
        "Bytes one client (API key, or address when keys are off) may hold in the broker: job records (their "
        "glossaries included), compressed documents, stored glossaries and translation memories until they "
        "expire; a submission over it gets 429 `storage_quota_exceeded` (0: no limit).",
    )
    quota_chars_per_day: int = setting(
        0,
        "Characters one client (API key, or address when keys are off) may submit per UTC day, cached or "
        "not (a document: the characters of its text once parsed); over it a submission gets 429 "
        "`quota_exceeded` until the next day, a document's job fails `quota_exceeded` (0: no limit).",
    )
    quota_chars_per_month: int = setting(0, "Characters one client may submit per UTC month (0: no limit).")
    quota_overrides: str = setting(
        "",
        "Per-key limits: `<client>=<per day>/<per month>` items, comma-separated, the client being a key's "
        "id as GET /v1/usage and `transq key-id KEY` show it (`key:` and 32 hex digits); 0 means no limit.",
    )
    max_document_parts: int = setting(
        50_000,
        "Most parts (tags, paragraphs, Word runs, table cells, subtitles) a document may have; one with more fails "
        "its job with `document_too_complex` as soon as the count is passed while it is read, so its cost stays "
        "bounded.",
    )
    docx_unpacked_base_mb: int = setting(
        32,
        "A .docx, .xlsx, .pptx or .odt may unpack to this many MiB plus TRANSQ_DOCX_UNPACKED_RATIO times its size; more fails the job with "
        "`document_too_complex`.",
    )
    docx_unpacked_ratio: int = setting(
        20,
        "How many times its own size a .docx, .xlsx, .pptx or .odt may unpack to, on top of TRANSQ_DOCX_UNPACKED_BASE_MB.",
    )
    max_texts: int = setting(1000, "Most texts in one job.")
    max_chars: int = setting(100_000, "Most characters in one job, all texts together.")
    max_sentences: int = setting(10_000, "Most sentences in one job after splitting.")
    max_sentence_chars: int = setting(
        300, "Sentences longer than this are split at commas or spaces (or hard) before translation."
    )
    glossary_max_terms: int = setting(
        1000,
        "Most terms in one glossary: a request's `glossary`, a stored one, or both together (docs/api.md: Glossaries).",
    )
    glossary_max_term_chars: int = setting(
        100,
        "Longest source or target term of a glossary, in characters (a sentence has at most about this many term "
        "occurrences ending at each of its characters: RELIABILITY 98, 111).",
    )
    glossary_max_stored: int = setting(
        100, "Most glossaries one API key (or, keys off, one client address) may store with POST /v1/glossaries."
    )
    glossary_ttl: int = setting(
        2_592_000,
        "Seconds a stored glossary lives after it was stored or last read (GET, or a request naming its "
        "`glossary_id`); meanwhile it counts against its owner's TRANSQ_CLIENT_STORAGE_BYTES.",
    )

    # Time limits and TTLs
    task_soft_time_limit: int = setting(
        600,
        "Seconds a worker task (one round) may run; a round gives its jobs back after half of it, so only a "
        "job whose single batch runs this long fails with `timeout`.",
    )
    task_time_limit: int = setting(660, "Seconds after which the worker process running a task is killed.")
    visibility_timeout: int = setting(
        900, "Seconds before an unacknowledged message of a dead worker is delivered again (above the hard limit)."
    )
    job_ttl: int = setting(86_400, "Seconds a queued or running job record lives.")
    result_ttl: int = setting(86_400, "Seconds a finished job stays readable.")
    cache_ttl: int = setting(30 * 86_400, "Seconds a cached sentence translation lives.")
    low_confidence: float = setting(
        -1.0,
        "A sentence whose confidence (its output's length-normalised log-probability) "
        "is under this counts as low in a job's `confidence` summary and is flagged on the web page.",
    )
    min_confidence: float = setting(
        float("-inf"),
        "The quality gate for a job that sets no `min_confidence`: a sentence whose confidence is under it is "
        "made again with a wider beam, then flagged `low_confidence` (or withheld) if still under; -inf: off.",
    )
    idempotency_ttl: int = setting(86_400, "Seconds an Idempotency-Key maps to its job.")
    lease_seconds: float = setting(
        15.0, "A running job's lease; a job whose worker stops renewing it is taken over by another."
    )
    heartbeat_seconds: float = setting(5.0, "How often a worker renews its heartbeat and its jobs' leases.")
    worker_id_file: str = setting(
        "/tmp/transq-worker-id",
        "File where a worker process writes its id once its model is loaded; the container health check reads it.",
    )
    max_deliveries: int = setting(
        3,
        "Lost deliveries (a worker, or a document stage, killed mid-job) after which a job fails with `worker_lost`.",
    )
    max_memory_per_child_mb: int = setting(
        0, "Celery `worker_max_memory_per_child` in MiB; 0 means model size + 1 GiB, set at start."
    )

    # Completion callbacks
    callback_secret: str = setting(
        "",
        "Server secret that signs completion callbacks (`X-Transq-Signature`, HMAC-SHA256); at least 16 characters. "
        "Empty: callbacks are off (a `callback_url` gets 422, the deliverer idles). Keep it in a secret.",
    )
    callback_deadline: int = setting(
        3600, "Seconds after a job is final during which its callback is retried; then it is `failed`."
    )
    callback_timeout: float = setting(
        10.0,
        "Seconds one callback attempt may take in all: resolving the host, connecting, TLS, sending, and the "
        "receiver's status and headers (however slowly they trickle); then it is cut and retried.",
    )
    callback_retry_seconds: float = setting(
        2.0, "Wait before a failed callback's first retry; it doubles each retry, up to 10 minutes."
    )
    callback_concurrency: int = setting(16, "Callbacks one deliverer sends at once (threads waiting on sockets).")
    callback_per_receiver: int = setting(
        2,
        "Callbacks one deliverer sends at once to one receiver (the URL's host and port); its other due "
        "callbacks wait in the outbox, leaving the senders to other receivers.",
    )
    callback_per_owner: int = setting(
        4,
        "Callbacks one deliverer sends at once for one API key's jobs (no limit when API keys are off); its other "
        "due callbacks wait in the outbox, leaving the senders to other keys.",
    )
    callback_allow_http_hosts: str = setting(
        "",
        "Comma-separated `host:port` pairs a `callback_url` may name with plain `http` (a bare host: port 80 only; "
        "`*`: any); others need `https`.",
    )
    callback_allow_private_hosts: str = setting(
        "",
        "Comma-separated `host:port` pairs (`[v6]:port`) a `callback_url` may name although the host resolves to "
        "loopback, private, link-local or other non-public addresses (a bare host: its scheme's default port only, "
        "never every port; `*`: any host and port); others are refused (SSRF).",
    )

    # API behaviour
    max_queue: int = setting(10_000, "Jobs waiting in the queue above which submissions get 503 `overloaded`.")
    wait_timeout: float = setting(30.0, "Longest `timeout` accepted by POST /v1/translate and used by /api/translate.")
    api_keys: str = setting("", "Comma-separated API keys; empty disables authentication.")
    key_id_secret: str = setting(
        "", "Secret of API key ids (HMAC-SHA256); empty: one made at random and kept in the broker on first use."
    )
    metrics_token: str = setting("", "Bearer token /metrics needs to show per-API-key series (empty: never shown).")
    rate_limit: str = setting(
        "600/minute", "Per API key (or client address) rate limit in flask-limiter syntax; empty disables it."
    )
    auth_failure_limit: str = setting(
        "20/minute", "Failed API key checks allowed per client address (flask-limiter syntax); more get 429."
    )
    read_timeout: float = setting(10.0, "Seconds to send a request's headers (idle keep-alive too); a body's grace.")
    request_timeout: float = setting(60.0, "Seconds a whole request (headers and body) may take to arrive; then 408.")
    body_min_rate: int = setting(1024, "Bytes/s a request body must average once TRANSQ_READ_TIMEOUT is over; or 408.")
    header_bytes: int = setting(65_536, "Most bytes of a request's line and headers together; more get 431.")
    connections_per_client: int = setting(
        100,
        "Connections one client address (IPv6: its /64) may hold per API process; more get 429 (0: no limit; "
        "behind a reverse proxy every client has the proxy's address: raise it, or 0).",
    )
    event_streams_per_key: int = setting(
        8,
        "Event streams (GET /v1/jobs/<id>/events) one API key (or, keys off, one client address) may hold open at "
        "once, over all API processes; more get 429 (0: no limit).",
    )
    event_stream_seconds: int = setting(
        600, "Longest an event stream stays open; then it ends and the client reconnects with Last-Event-ID."
    )
    event_idle_seconds: int = setting(
        120, "An event stream that has had no event for this long ends (the client may reconnect with Last-Event-ID)."
    )
    event_heartbeat_seconds: float = setting(
        15.0, "How often an event stream with nothing to say sends a comment, so proxies keep it open."
    )
    compat_apis: str = setting(
        "deepl,libretranslate",
        "The other services' APIs the server also speaks (api/compat): comma-separated `deepl` (DeepL API v2 under "
        "/v2/) and `libretranslate` (/translate, /detect, /languages, ...); empty: neither.",
    )
    public_url: str = setting(
        "",
        "The address clients reach the API at (`https://mt.example.com`, a path allowed), for the URLs the API writes "
        "into its answers (LibreTranslate's `translatedFileUrl`); empty: the request's own scheme and Host header, "
        "which a client chooses and a proxy in front may change.",
    )
    log_format: str = setting("text", "`text` or `json` (one JSON object per line).")
    log_level: str = setting("INFO", "Logging level.")
    production: bool = setting(
        False,
        "Refuse to start without API keys, or with a placeholder (`change-me` and the like) as an API key, "
        "TRANSQ_CALLBACK_SECRET, TRANSQ_METRICS_TOKEN, TRANSQ_KEY_ID_SECRET or a Redis URL's password; "
        'deploy/kubernetes sets it (docs/deployment.md, "Secrets").',
    )
    test_hooks: bool = setting(False, "Test-only behaviour (a poison sentence kills the worker). Never in production.")
