"""deploy/kubernetes's routes: every ScaledObject watches the keys its workers fill (computed with transq's own
code from the rendered worker's environment), whatever the model, and its addresses follow the overlay's
namespace; the API's own route is one the workers serve."""

from __future__ import annotations

import shutil
import subprocess
from urllib.parse import urlsplit

import yaml

from shared.routing.routes import route_for
from shared.settings import Settings
from shared.store.keys import Keys
from tests.deploy.conftest import KUBE, by_name, environment, of_kind, tool
from tests.deploy.secrets import filled
from tests.deploy.test_kubernetes import workers


def scaled_objects(docs: list[dict]) -> dict[str, dict]:
    return {s["spec"]["scaleTargetRef"]["name"]: s for s in of_kind(docs, "ScaledObject")}


def test_every_scaled_object_watches_the_keys_its_workers_fill_named_by_the_route(rendered):
    docs = rendered["docs"]
    scaled = scaled_objects(docs)
    for deployment in workers(docs):
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        env = environment(docs, container)
        settings = Settings.from_env(filled(env))
        route = route_for(settings)
        # the route is named in the manifest (TRANSQ_ROUTE), not a digest of the model and settings
        assert route.key == env["TRANSQ_ROUTE"] == f"{route.source}-{route.target}", route
        triggers = {t["type"]: t["metadata"] for t in scaled[deployment["metadata"]["name"]]["spec"]["triggers"]}
        assert triggers["redis"]["listName"] == Keys(settings.key_prefix).pending(route.key)
        assert triggers["metrics-api"]["valueLocation"] == f'transq_route_workers_busy{{route="{route.key}"}}'


def test_the_key_stays_when_the_model_or_its_settings_change(rendered):
    """A baked image (TRANSQ_MODEL=/opt/model) or another beam size: the same route, the same keys."""
    docs = rendered["docs"]
    for deployment in workers(docs):
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        env = filled(environment(docs, container))
        baked = {**env, "TRANSQ_MODEL": "/opt/model", "TRANSQ_NUM_BEAMS": "1"}
        assert route_for(Settings.from_env(baked)).key == route_for(Settings.from_env(env)).key


def test_the_apis_own_route_is_one_the_workers_serve(rendered):
    """Jobs the API routes before any worker has announced itself (workers scaled to zero) wait in a queue
    that workers read and KEDA watches."""
    docs = rendered["docs"]
    api = by_name(docs, "Deployment", "transq-api")["spec"]["template"]["spec"]["containers"][0]
    own = route_for(Settings.from_env(filled(environment(docs, api))))
    served = {}
    for deployment in workers(docs):
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        route = route_for(Settings.from_env(filled(environment(docs, container))))
        served[route.key] = route
    assert own.key in served and served[own.key].pair == own.pair, (own, served)


def render_copy(tmp_path, overlay: str, namespace: str) -> list[dict]:
    """The overlay rendered from a copy of deploy/kubernetes whose overlay names another namespace."""
    copy = tmp_path / "kubernetes"
    shutil.copytree(KUBE, copy)
    path = copy / "overlays" / overlay / "kustomization.yaml"
    text = path.read_text()
    assert "namespace: transq\n" in text
    path.write_text(text.replace("namespace: transq\n", f"namespace: {namespace}\n"))
    done = subprocess.run(
        [tool("kubectl"), "kustomize", str(copy / "overlays" / overlay)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def test_keda_addresses_follow_the_overlays_namespace(tmp_path):
    for overlay in ("one-pair", "two-pairs", "external-redis"):
        docs = render_copy(tmp_path / overlay, overlay, "team-b")
        assert {d["metadata"].get("namespace") for d in docs} == {"team-b"}
        for obj in of_kind(docs, "ScaledObject"):
            triggers = {t["type"]: t["metadata"] for t in obj["spec"]["triggers"]}
            metrics = urlsplit(triggers["metrics-api"]["url"]).hostname
            assert metrics == "transq-api-metrics.team-b.svc.cluster.local", metrics
            address = triggers["redis"]["address"]
            if overlay == "external-redis":
                assert address == "redis.example.internal:6379"
            else:
                assert address == "transq-redis.team-b.svc.cluster.local:6379", address
        assert "transq.svc" not in yaml.safe_dump_all(docs)
