"""The per-route gauges an autoscaler reads from /metrics (docs/deployment.md, "Scaling on the real queue"):
read here the way KEDA's metrics-api trigger reads them (Prometheus text, a metric selected by its route
label)."""

from prometheus_client.parser import text_string_to_metric_families

from shared.routing.routes import route_for
from shared.store.keys import Keys
from shared.store.workers import WorkerRegistry
from tests.stack import stack_settings


def gauge(text: str, name: str, route: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels.get("route") == route:
                return sample.value
    raise AssertionError(f"{name}{{route={route!r}}} not in /metrics")


def test_route_gauges_count_waiting_jobs_and_busy_workers(make_app, redis_client, redis_server, tmp_path):
    client = make_app().test_client()
    settings = stack_settings(redis_server.url, tmp_path / "no-model")
    route, keys = route_for(settings), Keys(settings.key_prefix)
    registry = WorkerRegistry(redis_client, keys, ttl_seconds=30)
    registry.beat("w-busy", {"pid": 1, "busy": True, "running_jobs": 3}, route, "ns")
    registry.beat("w-idle", {"pid": 2, "busy": False, "running_jobs": 0}, route, "ns")
    redis_client.zadd(keys.pending(route.key), {"a" * 32: 1.0, "b" * 32: 2.0})
    text = client.get("/metrics").get_data(as_text=True)
    assert gauge(text, "transq_route_queue_depth", route.key) == 2
    assert gauge(text, "transq_route_workers_ready", route.key) == 2
    assert gauge(text, "transq_route_workers_busy", route.key) == 1
    assert gauge(text, "transq_route_jobs_running", route.key) == 3
    assert f'transq_route_workers_busy{{pair="{route.pair}",route="{route.key}"}} 1.0' in text
