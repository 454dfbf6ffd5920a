"""Where the product decodes text: every call of a decoder, by the dotted name of its enclosing function.

The decoders are the functions that turn text or bytes into values (JSON, YAML, times, addresses);
each call is a place where tenant text could enter. `test_fuzz_registry_complete.py` requires each
enclosing function to be fuzzed (registered) or listed as reading no tenant text.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
#: The product's packages (what runs in the controller or in the user's kubectl plugin).
PACKAGES = ("jobflow_controller", "kubectl_jobflow", "informers", "workqueue")
#: Not the product at run time: the local control plane and Volcano simulator (tests, demo, bench).
EXCLUDED = ("jobflow_controller/local/",)
#: `<module or object>.<attribute>` calls that decode text.
DECODERS = frozenset(
    {
        "json.loads",
        "json.load",
        "orjson.loads",
        "yaml.safe_load",
        "yaml.load",
        "yaml.safe_load_all",
        "yaml.load_all",
        "datetime.fromisoformat",
        "datetime.datetime.fromisoformat",
        "datetime.strptime",
        "datetime.datetime.strptime",
        "ipaddress.ip_address",
        "ipaddress.ip_network",
        "ipaddress.ip_interface",
    }
)


@dataclass(frozen=True)
class CallSite:
    function: str  # dotted: package.module[.Class].function ("<module>" for module level)
    decoder: str
    path: str
    line: int


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


class _Finder(ast.NodeVisitor):
    def __init__(self, module: str, path: str) -> None:
        self.module, self.path = module, path
        self.scope: list[str] = []
        self.found: list[CallSite] = []

    def _nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _nested

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        if name in DECODERS:
            where = ".".join([self.module, *self.scope]) if self.scope else f"{self.module}.<module>"
            self.found.append(CallSite(where, name, self.path, node.lineno))
        self.generic_visit(node)


def call_sites() -> Iterator[CallSite]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(EXCLUDED):
                continue
            module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            finder = _Finder(module, rel)
            finder.visit(ast.parse(path.read_text(encoding="utf-8"), rel))
            yield from finder.found
