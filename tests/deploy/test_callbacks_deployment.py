"""deploy/kubernetes runs the callback deliverer in every overlay as compose does: its command, the workers'
image, every transq setting and the secret that signs callbacks, compose's memory, a healthcheck that reads
the file its loop touches (on a writable /tmp)."""

from __future__ import annotations

import re

import yaml

from shared.settings import Settings
from tests.deploy.conftest import ROOT, by_name, environment
from tests.deploy.secrets import filled
from tests.deploy.test_kubernetes import workers
from tests.deploy.test_kubernetes_services import COMPOSE
from worker.callbacks.deliverer import ALIVE_FILE


def test_the_callback_deliverer_runs_in_every_overlay_with_the_workers_image_and_the_secret(rendered):  # noqa: F811
    docs = rendered["docs"]
    api = by_name(docs, "Deployment", "transq-api")["spec"]["template"]["spec"]["containers"][0]
    pod = by_name(docs, "Deployment", "transq-callbacks")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    service = COMPOSE["services"]["callbacks"]
    assert container["command"] == service["command"] == ["python3", "-m", "worker.callbacks"]
    assert container["image"] == workers(docs)[0]["spec"]["template"]["spec"]["containers"][0]["image"]
    assert container["envFrom"] == api["envFrom"]  # the API checks callback URLs with the same settings
    env = environment(docs, container)
    settings = Settings.from_env(filled(env))
    assert settings.redis_url == Settings.from_env(filled(environment(docs, api))).redis_url
    for name in ("TRANSQ_CALLBACK_DEADLINE", "TRANSQ_CALLBACK_ALLOW_HTTP_HOSTS", "TRANSQ_CALLBACK_ALLOW_PRIVATE_HOSTS"):
        assert name in env, name
    secret = by_name(docs, "Secret", next(s["secretRef"]["name"] for s in container["envFrom"] if "secretRef" in s))
    assert "TRANSQ_CALLBACK_SECRET" in secret["data"]  # a secret, never the ConfigMap
    assert not any("TRANSQ_CALLBACK_SECRET" in c.get("data", {}) for c in docs if c["kind"] == "ConfigMap")
    memory = re.fullmatch(r"\$\{CALLBACKS_MEMORY:-(\d+)m\}", service["mem_limit"])[1]
    assert container["resources"]["limits"]["memory"] == container["resources"]["requests"]["memory"] == f"{memory}Mi"
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["exec"]["command"] == service["healthcheck"]["test"][1:]
    (tmp,) = [m for m in container["volumeMounts"] if m["mountPath"] == str(ALIVE_FILE.parent)]
    assert "emptyDir" in {v["name"]: v for v in pod["volumes"]}[tmp["name"]]
    assert pod["terminationGracePeriodSeconds"] >= 2 * settings.callback_timeout


def test_compose_gives_every_service_the_callback_settings():
    env = COMPOSE["services"]["api"]["environment"]
    for name in ("TRANSQ_CALLBACK_SECRET", "TRANSQ_CALLBACK_DEADLINE", "TRANSQ_CALLBACK_ALLOW_PRIVATE_HOSTS"):
        assert name in env and name in COMPOSE["services"]["callbacks"]["environment"]
    host = yaml.safe_load((ROOT / "docker-compose.host.yml").read_text())["services"]
    assert set(env) <= set(host["api-host"]["environment"])  # the host override's API: the same settings
    assert host["callbacks"]["network_mode"] == "host"
