"""The translation worker's model (loading and decoding) never imports the rest of the worker (Celery,
leases, rounds) nor the broker, so it can be loaded, benchmarked and tested without one. Read from the source, not by import,
so a lazy import inside a function counts too."""

import ast
from pathlib import Path

from tests.stack import ROOT

MODEL = "worker.translation.model"
FORBIDDEN = ("worker", "celery", "redis", "api")


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_model_never_imports_the_scheduling():
    files = sorted((ROOT / "worker" / "translation" / "model").glob("*.py"))
    assert len(files) > 10
    crossing = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in imported_modules(path)
        if any(name == banned or name.startswith(banned + ".") for banned in FORBIDDEN)
        and not (name == MODEL or name.startswith(MODEL + "."))
    }
    assert not crossing, sorted(crossing)
