"""Settings of what transq's processes connect to and run: the Redis servers and the model with its
decoding (a part of the one Settings object, shared.settings)."""

from __future__ import annotations

from dataclasses import dataclass

from shared.settings.environment import setting


@dataclass(frozen=True)
class RuntimeSettings:
    # Redis roles
    redis_url: str = setting(
        "redis://127.0.0.1:6379/0", "Broker and job store (Celery queue, job records, heartbeats). Use `noeviction`."
    )
    cache_url: str = setting(
        "", "Sentence cache Redis; empty means the same server as TRANSQ_REDIS_URL. Use `allkeys-lru`."
    )
    key_prefix: str = setting("transq:", "Prefix of every Redis key and of the Celery queue name.")
    redis_socket_timeout: float = setting(
        2.0,
        "Seconds a broker/job-store Redis call may take before the API answers 503; also the idle seconds "
        "after which TCP keepalive probes every broker connection (a dead one is dropped 3 s later).",
    )
    cache_socket_timeout: float = setting(0.25, "Seconds a cache call may take before it counts as a miss.")
    redis_ca_file: str = setting(
        "", "CA certificate (PEM) that verifies the servers of `rediss://` URLs, unless a URL names its ssl_ca_certs."
    )
    redis_sentinels: str = setting(
        "",
        "Redis Sentinels `host:port,host:port`: the broker/job store is then the master TRANSQ_REDIS_MASTER they "
        "name, and TRANSQ_REDIS_URL gives only user, password, db and TLS (docs/deployment.md: Several hosts).",
    )
    redis_master: str = setting("transq", "The broker's master name at TRANSQ_REDIS_SENTINELS.")
    cache_master: str = setting(
        "",
        "The cache's master name at TRANSQ_REDIS_SENTINELS; empty: the cache is TRANSQ_CACHE_URL (or, unset, the "
        "broker's master).",
    )
    replica_wait_ms: int = setting(
        1000,
        "With TRANSQ_REDIS_SENTINELS: milliseconds a submission waits for a replica to acknowledge the job "
        "(`WAIT 1`) before 202; 503 if none did. 0: answer without waiting.",
    )
    task_events: bool = setting(
        False,
        "Celery task events for monitors such as Flower: the API's `task-sent` and the workers' own from the "
        "start. Each is a Redis PUBLISH (about 5 per one-sentence job: bench/per_job_cost.py); off, Flower still "
        "turns the workers' on itself (its `enable_events` command).",
    )

    # Model and generation
    model: str = setting(
        "Helsinki-NLP/opus-mt-zh-en", "Hugging Face hub id or local folder of a seq2seq translation model."
    )
    languages: str = setting(
        "",
        "The pair the model translates, `zh-en`; empty: read from the model (its tokenizer config, or an "
        "opus-mt-xx-yy name), else TRANSQ_SOURCE_LANG-TRANSQ_TARGET_LANG.",
    )
    route: str = setting(
        "",
        "The route's name, which names its workers' queue and pending set (`<prefix>pending:<route>`) and its "
        "/metrics label: set it where an autoscaler watches them (deploy/kubernetes sets it per route). Empty: "
        "`<pair>-<digest of the model and its generation settings>`. The API's own route takes it too.",
    )
    default_pair: str = setting(
        "zh-en",
        "The pair a request that names neither source_lang nor target_lang goes to when several pairs are "
        "served and no served language is detected in its texts (one served pair is always the default); "
        "empty: such a request gets 422.",
    )
    source_lang: str = setting("zh", "Source language of a model that names none (see TRANSQ_LANGUAGES).")
    target_lang: str = setting("en", "Target language of a model that names none (see TRANSQ_LANGUAGES).")
    quantize: str = setting(
        "int8", "`int8` (dynamic int8 Linear layers on CPU) or `none`. Ignored on CUDA, which uses fp16/bf16."
    )
    device: str = setting("auto", "`auto` (CUDA when available), `cpu` or `cuda`.")
    torch_threads: int = setting(
        0,
        "Intra-op threads for torch; 0 means the CPUs this process may use (affinity and its cgroup's CPU "
        "quota), one fewer while its threads wait for a CPU that other processes hold, back up while CPUs "
        "idle. A number is kept as it is.",
    )
    num_beams: int = setting(0, "Beam size; 0 means the model's generation config.")
    target_vocabulary: bool = setting(
        True,
        "Compute the decoder's output layer over the target vocabulary only (a Marian model's target.spm "
        "pieces): faster (bench.engines: +4 % to +69 %). With `0` a float model (TRANSQ_QUANTIZE=none) gives "
        "generate()'s tokens bit for bit; the target vocabulary differs only where a model writes a source-only "
        'piece or beam search meets a near tie (docs/architecture.md, "Decoding").',
    )
    max_new_tokens: int = setting(256, "Upper bound on output tokens per sentence.")
    min_new_tokens: int = setting(
        0, "Lower bound on output tokens per sentence (benchmarks force fixed-length outputs with it)."
    )
    max_input_tokens: int = setting(
        256, "Longest sentence in tokens given to the model at once; longer ones are split, never truncated."
    )
    max_batch_tokens: int = setting(4096, "Token budget of one model batch: padded source length x sentences x beams.")
    max_batch_sentences: int = setting(
        48,
        "Most rows in one model batch, a row being one beam of one sentence (48: 48 sentences greedy, 12 at beam 4).",
    )
    max_round_sentences: int = setting(
        512, "Most sentences one worker task takes from waiting jobs to translate together."
    )
    fair_slice_batches: int = setting(
        2,
        "Batches a round runs while other jobs wait before it gives its unfinished jobs back to the queue, so a "
        "big job cannot hold a worker (0: never).",
    )
    protect_spans: bool = setting(
        True,
        "Carry numbers, dates, times, URLs, e-mail addresses, code spans, template variables and inline markup "
        "through the model as a glossary's terms are, so they come back exactly (docs/api.md, Fidelity).",
    )
    output_guard: bool = setting(
        True,
        "Make a translation that loops or runs far too long again once, with repeats banned, and flag it in the "
        "job's warnings (off only for benchmarks, whose random-weight model loops by design).",
    )
    cgroup_root: str = setting(
        "/sys/fs/cgroup", "Where the memory guard reads the container's cgroup (v2 or v1) limit and usage."
    )
    memory_headroom_mb: int = setting(
        128, "Memory kept free below the container limit; batches are shrunk to respect it."
    )
