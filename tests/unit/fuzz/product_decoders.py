"""Where the product decodes text: every call of a decoder, by the dotted name of its enclosing function.

The decoders are the functions that turn text or bytes into values (JSON, YAML, times, addresses,
time zones) and the hand-written parsers built on regular expressions (a call of `re.match` and its
kin, or of a method of a module-level `re.compile` pattern); each call is a place where tenant text
could enter. `test_fuzz_registry_complete.py` requires each
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
        "zoneinfo.ZoneInfo",
        "ZoneInfo",
        *(f"re.{method}" for method in ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split")),
    }
)
#: The methods of a compiled pattern that read text.
PATTERN_METHODS = frozenset({"match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split"})


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


def _patterns(tree: ast.Module) -> set[str]:
    """The module-level names bound to `re.compile(...)` (possibly annotated `Final`)."""
    out: set[str] = set()
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call) and _dotted(value.func) == "re.compile":
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


class _Finder(ast.NodeVisitor):
    def __init__(self, module: str, path: str, patterns: frozenset[str] = frozenset()) -> None:
        self.module, self.path, self.patterns = module, path, patterns
        self.scope: list[str] = []
        self.found: list[CallSite] = []

    def _nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _nested

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        owner, _, method = (name or "").rpartition(".")
        if name not in DECODERS and owner in self.patterns and method in PATTERN_METHODS:
            name = f"re.Pattern.{method}"
        if name in DECODERS or (name or "").startswith("re.Pattern."):
            where = ".".join([self.module, *self.scope]) if self.scope else f"{self.module}.<module>"
            self.found.append(CallSite(where, name, self.path, node.lineno))
        self.generic_visit(node)


def call_sites() -> Iterator[CallSite]:
    trees: list[tuple[str, str, ast.Module]] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(EXCLUDED):
                continue
            module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            trees.append((module, rel, ast.parse(path.read_text(encoding="utf-8"), rel)))
    # A pattern is often compiled in one module and used in another (imported by its name).
    patterns = frozenset(name for _module, _rel, tree in trees for name in _patterns(tree))
    for module, rel, tree in trees:
        finder = _Finder(module, rel, patterns)
        finder.visit(tree)
        yield from finder.found
