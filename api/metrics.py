"""GET /metrics: Prometheus text built from the counters every process keeps in Redis.

Totals are open to any scraper; the series by API key (its id, shared.store.key_ids) only to one that sends
`Authorization: Bearer <TRANSQ_METRICS_TOKEN>`, and to none while that setting is empty."""

from __future__ import annotations

import hmac
from typing import Iterator

import redis
from flask import Blueprint, Response, current_app, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from api.auth import refuse_if_failing_too_often
from api.current import services
from shared.store.backends import Services
from shared.store.stats import HISTOGRAMS
from shared.text.fidelity import FLAGS

bp = Blueprint("metrics", __name__)

_COUNTERS = {
    "jobs_submitted": "Jobs accepted by the API (queued or answered from the cache).",
    "jobs_answered_from_cache": "Jobs answered entirely from the sentence cache by the API.",
    "jobs_succeeded": "Jobs finished by workers with a result.",
    "jobs_failed": "Jobs that failed, every way (counted by the store's scripts: timeout, worker_lost, "
    "resource_exhausted, internal_error, invalid_document, document_too_complex, ...).",
    "cache_hits": "Sentences workers found in the cache.",
    "cache_misses": "Sentences workers did not find in the cache.",
    "api_cache_hits": "Sentences the API found in the cache at submission.",
    "api_cache_misses": "Sentences the API did not find in the cache at submission.",
    "sentences_translated": "Distinct sentences the model translated.",
    "batches": "Model batches run by workers.",
    "degenerate_translations": "Translations that looped or ran far too long and were made again (see a job's warnings).",
    "leases_lapsed": "Running jobs whose worker (or document jobs whose document stage) stopped renewing their "
    "lease, woken for a live worker (stage) to take over.",
    "fenced_writes": "Late writes of a worker for a job another worker took over, refused (the late worker drops it).",
    "fidelity_sentences": "Sentences the model translated whose translation the fidelity check read.",
    "fidelity_spans_kept": "Protected spans (numbers, dates, URLs, ...) found in translations as in their sources.",
    "fidelity_spans_repaired": "Of those, put back verbatim because the model lost their placeholders.",
    "gate_retried": "Sentences under a job's min_confidence made again with a wider beam.",
    "gate_low_confidence": "Sentences of gated jobs still under their min_confidence after the retry (flagged).",
    "gate_withheld": "Of those, returned untranslated (on_low_confidence withhold).",
}


class RedisStatsCollector:
    def __init__(self, svc: Services, per_key: bool = False):
        self.svc = svc
        self.per_key = per_key  # the usage series by API key, or only their total

    def collect(self) -> Iterator[Metric]:
        counters, histograms = self.svc.stats.read()
        for name, help_text in _COUNTERS.items():
            family = CounterMetricFamily(f"transq_{name}", help_text)
            family.add_metric([], counters.get(name, 0))
            yield family
        flagged = CounterMetricFamily(
            "transq_fidelity_flags", "Translated sentences flagged by the fidelity check, by flag.", labels=["flag"]
        )
        for code in FLAGS:
            flagged.add_metric([code], counters.get(f"fidelity_flag:{code}", 0))
        yield flagged
        by_pair = GaugeMetricFamily("transq_pair_queue_depth", "Jobs waiting for a worker, by pair.", labels=["pair"])
        ready_by_pair = GaugeMetricFamily(
            "transq_pair_workers_ready", "Workers with a loaded model and a fresh heartbeat, by pair.", labels=["pair"]
        )
        waiting_total = messages_total = ready_total = 0
        for name, pair in self.svc.routes.pairs().items():
            waiting, queued = self.svc.store.queue_sizes([r.key for r in pair.routes])
            ready = sum(pair.workers.values())
            by_pair.add_metric([name], waiting)
            ready_by_pair.add_metric([name], ready)
            waiting_total, messages_total, ready_total = (
                waiting_total + waiting,
                messages_total + queued,
                ready_total + ready,
            )
        yield GaugeMetricFamily("transq_queue_depth", "Jobs waiting for a worker.", value=waiting_total)
        yield GaugeMetricFamily("transq_queue_messages", "Messages on the Celery queues.", value=messages_total)
        yield GaugeMetricFamily(
            "transq_workers_ready", "Workers with a loaded model and a fresh heartbeat.", value=ready_total
        )
        yield by_pair
        yield ready_by_pair
        by_decoding = GaugeMetricFamily(
            "transq_workers_decoding",
            "Live workers by decoding loop (generate: the model's generation config made it fall back).",
            labels=["decoding"],
        )
        for name, count in sorted(self.svc.routes.decoding.items()):
            by_decoding.add_metric([name], count)
        yield by_decoding
        yield from _route_gauges(self.svc)
        yield from _usage_counters(self.svc, self.per_key)
        for name, bounds in HISTOGRAMS.items():
            buckets = [(str(b), histograms.get(f"{name}:{b}", 0.0)) for b in bounds]
            buckets.append(("+Inf", histograms.get(f"{name}:+Inf", 0.0)))
            yield HistogramMetricFamily(
                f"transq_{name}",
                f"Histogram of {name.replace('_', ' ')}.",
                buckets=buckets,
                sum_value=histograms.get(f"{name}:sum", 0.0),
            )


def _route_gauges(svc: Services) -> Iterator[Metric]:
    """By route (one model, one worker Deployment): what an autoscaler scales a route's workers on (KEDA:
    docs/deployment.md, "Scaling on the real queue"). Busy workers come from their heartbeats (a round
    running), so a scale-in never goes below the workers with work in hand."""
    labels = ["route", "pair"]
    depth = GaugeMetricFamily("transq_route_queue_depth", "Jobs waiting in a route's pending set.", labels=labels)
    ready = GaugeMetricFamily("transq_route_workers_ready", "Live workers of a route.", labels=labels)
    busy = GaugeMetricFamily("transq_route_workers_busy", "Workers of a route running a round now.", labels=labels)
    running = GaugeMetricFamily(
        "transq_route_jobs_running", "Jobs in the rounds a route's workers run now.", labels=labels
    )
    live = svc.registry.live_workers()
    for name, pair in svc.routes.pairs().items():
        for route in pair.routes:
            mine = [w for w in live if w.get("route") == route.key]
            depth.add_metric([route.key, name], svc.store.pending_count(route.key))
            ready.add_metric([route.key, name], len(mine))
            busy.add_metric([route.key, name], sum(1 for w in mine if w.get("busy")))
            running.add_metric([route.key, name], sum(int(w.get("running_jobs") or 0) for w in mine))
    yield from (depth, ready, busy, running)


@bp.get("/metrics")
def metrics():  # type: ignore[no-untyped-def]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RedisStatsCollector(services(), per_key=_may_see_keys(services().settings.metrics_token)))
    try:
        body = generate_latest(registry)
    except redis.RedisError:
        return Response("# broker Redis unavailable\n", status=503, mimetype="text/plain")
    return Response(body, content_type=CONTENT_TYPE_LATEST)  # a full Content-Type: Flask adds no charset


def _may_see_keys(token: str) -> bool:
    """Whether this scrape presents the metrics token (constant-time comparison). A scrape without a token sees
    the totals; a wrong one counts as a failed credential check of its address (429 past TRANSQ_AUTH_FAILURE_LIMIT),
    so the token cannot be guessed at full speed."""
    header = request.headers.get("Authorization", "")
    given = header[7:].strip() if header.lower().startswith("bearer ") else ""
    if not given:
        return False
    if token and hmac.compare_digest(given.encode(), token.encode()):
        return True
    api_key = False  # a client's own API key (a scraper configured with one) is no guess at the token
    for key in services().settings.api_key_list:
        api_key |= hmac.compare_digest(given.encode(), key.encode())
    if not api_key:
        refuse_if_failing_too_often(current_app.extensions.get("transq_auth_failures"))
    return False


def _usage_counters(svc: Services, per_key: bool) -> Iterator[Metric]:
    """Characters submitted, all time: by API key (its id, never the key) for a scrape with the metrics
    token, else all clients as one, `all`; clients counted by address (keys off, or no valid key) are summed
    as one, `addresses`, so addresses never become labels."""
    characters = CounterMetricFamily(
        "transq_usage_characters",
        "Characters submitted, cached or not, by API key id (shared.store.key_ids).",
        labels=["client"],
    )
    cached = CounterMetricFamily(
        "transq_usage_cached_characters",
        "Characters answered by the cache at submission, by API key id (shared.store.key_ids).",
        labels=["client"],
    )
    summed: dict[str, tuple[int, int]] = {}
    for client, (chars, from_cache) in svc.quota.totals().items():
        label = "all" if not per_key else client if client.startswith("key:") else "addresses"
        before = summed.get(label, (0, 0))
        summed[label] = (before[0] + chars, before[1] + from_cache)
    for label, (chars, from_cache) in sorted(summed.items()):
        characters.add_metric([label], chars)
        cached.add_metric([label], from_cache)
    yield characters
    yield cached
