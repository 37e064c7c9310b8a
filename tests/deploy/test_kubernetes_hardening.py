"""deploy/kubernetes's safe defaults, on the rendered manifests: KEDA alone sets the workers' replicas, the
broker's StatefulSet has a headless governing Service and a disruption budget, only transq (and KEDA) reach
Redis, the API's replicas spread over nodes, and the committed placeholders stop every transq process."""

from __future__ import annotations

import pytest

from shared.settings import Settings
from tests.deploy.conftest import by_name, environment, of_kind
from tests.deploy.secrets import filled


def selects(selector: dict, labels: dict) -> bool:
    """Whether a label selector (matchLabels, matchExpressions with In) selects these labels."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] == "In", expression
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


def pod_labels(workload: dict) -> dict:
    return workload["spec"]["template"]["metadata"]["labels"]


def test_keda_alone_sets_the_scaled_deployments_replicas(rendered):
    """A `replicas` in the manifest would reset KEDA's count on every `kubectl apply`."""
    docs = rendered["docs"]
    for obj in of_kind(docs, "ScaledObject"):
        target = by_name(docs, "Deployment", obj["spec"]["scaleTargetRef"]["name"])
        assert "replicas" not in target["spec"], target["metadata"]["name"]


def test_the_brokers_statefulset_has_a_headless_governing_service_and_a_disruption_budget(rendered):
    docs = rendered["docs"]
    for stateful in of_kind(docs, "StatefulSet"):
        service = by_name(docs, "Service", stateful["spec"]["serviceName"])
        assert service["spec"]["clusterIP"] == "None"
        assert selects({"matchLabels": service["spec"]["selector"]}, pod_labels(stateful))
        budgets = [
            b for b in of_kind(docs, "PodDisruptionBudget") if selects(b["spec"]["selector"], pod_labels(stateful))
        ]
        assert budgets and all(b["spec"].get("minAvailable") == stateful["spec"]["replicas"] for b in budgets)


def test_only_transq_and_keda_reach_the_redis_servers(rendered):
    docs = rendered["docs"]
    servers = [
        d
        for d in of_kind(docs, "StatefulSet") + of_kind(docs, "Deployment")
        if "redis" in str(d["spec"]["template"]["spec"]["containers"][0]["image"])
    ]
    if rendered["overlay"] == "external-redis":
        assert not servers
        return
    assert servers
    policies = of_kind(docs, "NetworkPolicy")
    clients = [
        d
        for d in of_kind(docs, "Deployment")
        if d["spec"]["template"]["spec"]["containers"][0]["image"].startswith("transq-")
    ]
    for server in servers:
        (policy,) = [p for p in policies if selects(p["spec"]["podSelector"], pod_labels(server))]
        assert policy["spec"]["policyTypes"] == ["Ingress"]
        sources = [source for rule in policy["spec"]["ingress"] for source in rule["from"]]
        for client in clients:  # every transq process connects to both
            assert any("podSelector" in s and selects(s["podSelector"], pod_labels(client)) for s in sources), client
        keda = [s for s in sources if "namespaceSelector" in s]
        assert keda == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "keda"}}}]
        assert not any(
            selects(s.get("podSelector", {"matchLabels": {"x": "y"}}), {"app.kubernetes.io/name": "stranger"})
            for s in sources
        )
    # the background processes listen on nothing
    quiet = [p for p in policies if not p["spec"].get("ingress") and p["spec"]["policyTypes"] == ["Ingress"]]
    for deployment in clients:
        if not deployment["metadata"]["name"].startswith("transq-api"):
            assert any(selects(p["spec"]["podSelector"], pod_labels(deployment)) for p in quiet), deployment[
                "metadata"
            ]["name"]


def test_the_api_replicas_spread_over_nodes(rendered):
    api = by_name(rendered["docs"], "Deployment", "transq-api")
    constraints = {c["topologyKey"]: c for c in api["spec"]["template"]["spec"]["topologySpreadConstraints"]}
    host = constraints["kubernetes.io/hostname"]
    assert host["whenUnsatisfiable"] == "DoNotSchedule" and host["maxSkew"] == 1
    assert all(selects(c["labelSelector"], pod_labels(api)) for c in constraints.values())
    assert "topology.kubernetes.io/zone" in constraints


def transq_containers(docs: list[dict]) -> list[dict]:
    return [
        c
        for d in of_kind(docs, "Deployment")
        for c in d["spec"]["template"]["spec"]["containers"]
        if c["image"].startswith("transq-")
    ]


def test_the_committed_placeholders_stop_every_transq_process_and_real_secrets_start_them(rendered):
    """As committed (no API key, `change-me` as the Redis password), every transq process refuses to start
    with a message naming what to set; with the operator's secrets it starts."""
    docs = rendered["docs"]
    for container in transq_containers(docs):
        env = environment(docs, container)
        assert env["TRANSQ_PRODUCTION"] == "1"
        with pytest.raises(
            ValueError, match="TRANSQ_PRODUCTION=1: refusing to start: TRANSQ_API_KEYS is empty"
        ) as refused:
            Settings.from_env(env)
        if rendered["overlay"] != "external-redis":
            assert "TRANSQ_REDIS_URL holds a placeholder" in str(refused.value)
            assert "change-me" not in str(refused.value)  # a credential is never shown
        Settings.from_env(filled(env))
