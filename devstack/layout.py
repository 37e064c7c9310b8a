"""The code's layout measured from its source, and the rules it keeps: `python -m devstack.layout [--root DIR]`.

transq runs four processes, one folder each: the API (`api`), the translation worker (`worker.translation`),
the document stage (`worker.documents`) and the callback deliverer (`worker.callbacks`); `shared` is what
several of them use. A process's code imports its own folder and `shared` only; `shared` imports only
itself; nothing outside `api` imports `api`. Imports are read from the source (a function-level import counts;
one under `if TYPE_CHECKING:` does not, as it never runs), so the rules hold for code a test never reaches.

The report prints, per package, its modules and lines, the modules over 280 lines and under 40 (package
`__init__` and `__main__` files left out of the small ones), the imports
that cross a process boundary, the import cycles, and the README's length. The tests
(tests/test_layout.py) check the same figures.
"""

from __future__ import annotations

import argparse
import ast
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("api", "worker", "shared", "transq_cli", "devstack")
# Each process's folder, and what it may import besides itself.
PROCESSES = {
    "api": ("api", "shared"),
    "worker.translation": ("worker.translation", "shared"),
    "worker.documents": ("worker.documents", "shared"),
    "worker.callbacks": ("worker.callbacks", "shared"),
    "shared": ("shared",),
}
MAX_LINES = 280
SMALL_LINES = 40

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Import:
    importer: str  # the importing module
    imported: str  # the project module it names (the longest that exists)
    line: int


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the project's packages under `root`, by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imported_names(path: Path) -> list[tuple[str, int]]:
    """Every module name an import statement of `path` names, with its line (`from a import b` names `a`
    and `a.b`); imports under `if TYPE_CHECKING:` are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = {
        id(node)
        for branch in ast.walk(tree)
        if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
        for node in ast.walk(branch)
    }
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append((node.module, node.lineno))
            names += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
    return names


def project_imports(found: dict[str, Path]) -> list[Import]:
    """The imports of project modules by project modules, each resolved to the module it loads."""
    edges = set()
    for importer, path in found.items():
        for name, line in imported_names(path):
            while name and name not in found:
                name = name.rpartition(".")[0]
            if name and name != importer:
                edges.add(Import(importer, name, line))
    return sorted(edges, key=lambda e: (e.importer, e.line, e.imported))


def _within(name: str, folder: str) -> bool:
    return name == folder or name.startswith(folder + ".")


def process_of(module: str) -> str | None:
    """The process folder (or `shared`) a module belongs to; None for the CLI and the dev tools."""
    return next((folder for folder in PROCESSES if _within(module, folder)), None)


def crossings(edges: list[Import]) -> list[Import]:
    """Imports that leave their process's folder for anything but `shared`, and any import of `api` from
    outside it (the CLI and the dev tools included)."""
    crossing = []
    for edge in edges:
        home = process_of(edge.importer)
        allowed = PROCESSES.get(home or "", ())
        if home is None and not _within(edge.imported, "api"):
            continue
        if not any(_within(edge.imported, folder) for folder in allowed):
            crossing.append(edge)
    return crossing


def cycles(edges: list[Import]) -> list[list[str]]:
    """The import cycles between modules (strongly connected groups of more than one), function-level
    imports included."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.importer, set()).add(edge.imported)
        graph.setdefault(edge.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return groups


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def report(root: Path = ROOT) -> str:
    found = modules(root)
    edges = project_imports(found)
    lines = {name: line_count(path) for name, path in found.items()}
    out = [f"layout of {root}", "", f"{'package':<22}{'modules':>8}{'lines':>8}{'mean':>7}{'>280':>6}{'<40':>6}"]
    groups = sorted(
        {".".join(name.split(".")[:2]) if name.startswith("worker.") else name.split(".")[0] for name in found}
    )
    for group in [*groups, "all"]:
        members = [n for n in found if group == "all" or _within(n, group)]
        if not members:
            continue
        total = sum(lines[n] for n in members)
        big = sum(lines[n] > MAX_LINES for n in members)
        small = sum(lines[n] < SMALL_LINES and found[n].stem not in ("__init__", "__main__") for n in members)
        out.append(f"{group:<22}{len(members):>8}{total:>8}{total / len(members):>7.0f}{big:>6}{small:>6}")
    over = [f"  {n} ({lines[n]} lines)" for n in sorted(found) if lines[n] > MAX_LINES]
    crossing = [f"  {e.importer} imports {e.imported} (line {e.line})" for e in crossings(edges)]
    loops = [f"  {' <-> '.join(group)}" for group in cycles(edges)]
    readme = root / "README.md"
    out += [
        "",
        f"modules over {MAX_LINES} lines: {len(over)}",
        *over,
        f"imports crossing a process boundary: {len(crossing)}",
        *crossing,
        f"import cycles (function-level imports included): {len(loops)}",
        *loops,
        f"README.md: {line_count(readme) if readme.exists() else 0} lines",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.layout", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="a checkout (default: this one)")
    args = parser.parse_args(argv)
    sys.stdout.write(report(args.root.resolve()) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
