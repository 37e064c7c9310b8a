"""deploy/kubernetes's services agree with compose and the code: the document stage runs in every overlay with
the API's image and settings, and the in-cluster Redis servers require the password the URLs carry."""

from __future__ import annotations

import re
import subprocess
import time
from urllib.parse import urlsplit

import pytest
import redis
import yaml

from devstack.redis_server import free_port, redis_server_binary, stop_process
from shared.settings import Settings
from tests.deploy.conftest import ROOT, by_name, environment, expand, render
from tests.deploy.secrets import filled
from tests.deploy.test_kubernetes import workers

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def compose_document_command() -> list[str]:
    """The celery command compose's `document` service execs, less the node name it makes up (under host
    networking every replica would otherwise be celery@<host>; a pod has a host name of its own)."""
    import shlex

    script = COMPOSE["services"]["document"]["command"][-1]
    words = shlex.split(script[script.index("exec ") + len("exec ") :])
    at = words.index("-n")
    return words[:at] + words[at + 2 :]


def test_the_document_stage_runs_in_every_overlay_with_the_workers_image_and_the_apis_settings(rendered):
    """Without it, document jobs stay `parsing`: the compose `document` service's command, the worker's image
    (it ships every background process), the API's ConfigMap and Secret, the per-document limits in the config, and compose's memory and CPU."""
    docs = rendered["docs"]
    api = by_name(docs, "Deployment", "transq-api")["spec"]["template"]["spec"]["containers"][0]
    document = by_name(docs, "Deployment", "transq-document")
    pod = document["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    service = COMPOSE["services"]["document"]
    assert container["command"] == compose_document_command()
    assert container["command"][:3] == ["celery", "-A", "worker.documents.stage"]
    assert container["image"] == workers(docs)[0]["spec"]["template"]["spec"]["containers"][0]["image"]
    assert container["envFrom"] == api["envFrom"]
    env = environment(docs, container)
    settings = Settings.from_env(filled(env))
    assert settings.redis_url == Settings.from_env(filled(environment(docs, api))).redis_url
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
        assert "celery -A worker.documents.stage inspect ping --timeout 5" in command[2]
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
        # the committed password is the placeholder docs/deployment.md says to change, never a real one
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
