"""The processes are the folders, and every image can start what it is asked to run.

Each image's file tree is built from its Dockerfile's COPY lines (no Docker needed), and in it, with nothing
else of the checkout importable, every module the image ships is imported and every command a compose
service or a Kubernetes container runs there names a module the tree has. A process that imports a folder
its image lacks (the deliverer importing `api` from the worker image, the image's bake step importing a
module it did not copy) fails here. The layout rules themselves (devstack.layout): no import crosses a
process boundary, no import cycle, no module over 280 lines."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from devstack.layout import MAX_LINES, PROCESSES, crossings, cycles, line_count, modules, project_imports
from tests.stack import ROOT

IMAGES = {"transq-api": "Dockerfile.api", "transq-worker": "Dockerfile.worker"}
APP_DIR = "/opt/transq"  # where both images put the source (PYTHONPATH)
TOP = ("api", "worker", "shared", "transq_cli", "devstack")
ENTRY = re.compile(r"(?:-m\s+|-A\s+|python:)([A-Za-z_][\w.]*)|'([A-Za-z_][\w.]*):create_app\(\)'")


def final_stage_copies(dockerfile: str) -> list[tuple[str, str]]:
    """(source, destination) of the final stage's COPY lines from the build context (not --from)."""
    text = (ROOT / dockerfile).read_text().replace("\\\n", " ")
    stages = re.split(r"(?m)^FROM\s", text)
    copies = []
    for line in stages[-1].splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from") for w in words):
            sources = [w for w in words[1:-1] if not w.startswith("--")]
            copies += [(source, words[-1]) for source in sources]
    return copies


def build_tree(dockerfile: str, into: Path) -> Path:
    """The image's source tree (what it copies under APP_DIR), made under `into`."""
    app = into / "app"
    for source, destination in final_stage_copies(dockerfile):
        if not destination.startswith(APP_DIR):
            continue
        target = app / destination[len(APP_DIR) :].lstrip("/")
        if (ROOT / source).is_dir():
            shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / source, target)
    return app


def commands() -> list[tuple[str, str, str]]:
    """(where, image, command) of everything run in transq's images: compose services' commands and
    healthchecks, Kubernetes containers' commands and probes, each Dockerfile's CMD and HEALTHCHECK."""
    found = []
    for image, dockerfile in IMAGES.items():
        text = (ROOT / dockerfile).read_text().replace("\\\n", " ")
        for line in text.splitlines():
            if line.startswith(("CMD", "HEALTHCHECK")):
                run = (line.split(" CMD ", 1)[-1] if line.startswith("HEALTHCHECK") else line[len("CMD") :]).strip()
                found.append(
                    (f"{dockerfile}: {line.split()[0]}", image, _words(json.loads(run)) if run[:1] == "[" else run)
                )
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        image = str(service.get("image", "")).split(":")[0]
        if image not in IMAGES:
            continue
        for part in ("command", "healthcheck"):
            value = service.get(part)
            if value:
                found.append((f"compose {name} {part}", image, _words(value)))
    for path in sorted((ROOT / "deploy").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            spec = (doc or {}).get("spec", {}).get("template", {}).get("spec", {}) if isinstance(doc, dict) else {}
            for container in spec.get("containers", []) if isinstance(spec, dict) else []:
                image = str(container.get("image", "")).split(":")[0]
                if image in IMAGES:
                    found.append((f"{path.relative_to(ROOT)} {container['name']}", image, _words(container)))
    return found


def _words(value: object) -> str:
    """Every string in a YAML value (a command list, a probe), joined by spaces."""
    if isinstance(value, dict):
        return " ".join(_words(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(_words(v) for v in value)
    return str(value)


def entry_modules(command: str) -> set[str]:
    return {a or b for a, b in ENTRY.findall(command) if (a or b).split(".")[0] in TOP}


def static_imports(app: Path) -> list[str]:
    """Every import of a project package in the tree (function-level ones too) that the tree cannot
    satisfy: its module is neither a file nor a package there."""
    missing = []
    for path in sorted(app.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in TOP and not _in_tree(app, name):
                    missing.append(f"{path.relative_to(app)} imports {name}")
    return missing


def _in_tree(app: Path, name: str) -> bool:
    base = app.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


# Run in a fresh interpreter: the checkout's packages (on sys.path, or through the editable install's
# finder) are removed, the tree is put first; every module it ships is imported; every project module
# loaded must come from the tree.
PROBE = r"""
import importlib, json, os, pkgutil, sys
app, top = sys.argv[1], sys.argv[2].split(",")
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path[:] = [app] + [p for p in sys.path if p and "__editable__" not in p and p.rstrip("/") != sys.argv[3]]
sys.path_importer_cache.clear()
failures = []
for package in sorted(os.listdir(app)):
    if package not in top:
        continue
    names = [package] + [m.name for m in pkgutil.walk_packages([os.path.join(app, package)], package + ".")]
    for name in names:
        if name.endswith("__main__"):
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
strays = sorted(name for name, module in sys.modules.items() if name.split(".")[0] in top
                and not (getattr(module, "__file__", None) or "").startswith(app)
                and not all(p.startswith(app) for p in getattr(module, "__path__", [app])))
print(json.dumps({"failures": failures, "strays": strays}))
"""


@pytest.mark.parametrize("image", sorted(IMAGES))
def test_each_image_ships_every_module_its_code_imports(image, tmp_path):
    app = build_tree(IMAGES[image], tmp_path)
    assert sorted(p.name for p in app.iterdir()), f"{IMAGES[image]} copies no source"
    assert not static_imports(app), static_imports(app)
    done = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, str(app), ",".join(TOP), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"failures": [], "strays": []}


def test_every_command_run_in_an_image_names_a_module_that_image_ships(tmp_path):
    trees = {image: build_tree(dockerfile, tmp_path / image) for image, dockerfile in IMAGES.items()}
    seen, missing = set(), []
    for where, image, command in commands():
        for module in entry_modules(command):
            seen.add(module)
            if not _in_tree(trees[image], module):
                missing.append(f"{where} runs {module}, which the {image} image does not ship")
    assert not missing, missing
    # every process's entry is among them: the API, the worker and its healthcheck, the document stage, the deliverer
    for expected in ("api", "api.gunicorn_config", "worker.translation", "worker.documents.stage", "worker.callbacks"):
        assert expected in seen, f"nothing runs {expected}"


def test_the_worker_image_bakes_its_model_from_whole_packages():
    """The bake step (BAKE_MODEL=test-model) runs the offline model builder as a module of the package it
    copies, so whatever that package imports is there."""
    text = (ROOT / "Dockerfile.worker").read_text().replace("\\\n", " ")
    copies = [line.split()[1:] for line in text.splitlines() if line.startswith("COPY worker")]
    copied = {source for source, _ in copies}
    assert "worker/translation/model" in copied
    assert "-m worker.translation.model.offline_model" in text
    model = ROOT / "worker" / "translation" / "model"
    for path in model.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(("worker", "shared")):
                if path.name in ("offline_model.py", "copy_construction.py", "model_shapes.py"):
                    assert node.module.startswith("worker.translation.model"), f"{path.name} imports {node.module}"


def test_no_import_crosses_a_process_boundary_and_none_goes_round():
    found = modules()
    edges = project_imports(found)
    assert {"api", "worker.translation", "worker.documents", "worker.callbacks"} <= set(PROCESSES)
    assert not crossings(edges), [f"{e.importer} imports {e.imported}" for e in crossings(edges)]
    assert not cycles(edges), cycles(edges)


def test_the_rules_catch_what_they_are_for(tmp_path):
    """The checks above are not vacuous: a deliverer importing the API, and a cycle through a function-level
    import, are both found."""
    for package in ("api", "worker/callbacks", "shared"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "worker" / "__init__.py").write_text("")
    (tmp_path / "api" / "views.py").write_text("from shared.a import x\n")
    (tmp_path / "worker" / "callbacks" / "deliverer.py").write_text("from api.views import y\n")
    (tmp_path / "shared" / "a.py").write_text("def f():\n    from shared.b import z\n")
    (tmp_path / "shared" / "b.py").write_text("from shared.a import f\n")
    edges = project_imports(modules(tmp_path))
    assert [(e.importer, e.imported) for e in crossings(edges)] == [("worker.callbacks.deliverer", "api.views")]
    assert cycles(edges) == [["shared.a", "shared.b"]]


def test_no_module_is_over_the_size_limit():
    over = {name: line_count(path) for name, path in modules().items() if line_count(path) > MAX_LINES}
    assert not over, over
