"""No import cycle in grader/: every import a module makes (at its top or inside a function, for
typing too) is an edge to the module it names, and ``from package import name`` also to the
package (a name taken from its __init__, as far as a static reader can tell)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "grader"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            edges[name] |= {target for target in targets if target in modules and target != name}
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None (a depth-first search)."""
    state: dict[str, int] = {}   # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_grader_has_no_import_cycle():
    cycle = _cycle(_edges(_modules()))
    assert cycle is None, " -> ".join(cycle or ())
