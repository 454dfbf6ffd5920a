"""An import-linter contract type: no import cycle anywhere in the root packages.

import-linter's own `acyclic_siblings` looks for cycles between the children of a package only, so
it misses a package whose `__init__` imports a submodule that imports the package back. This one
looks at every module: a module is on a cycle when something it imports, directly or not, imports
it back. `[tool.importlinter]` in pyproject.toml registers it; `lint-imports` puts the working
directory on sys.path, which is how `hack.import_cycles` is found.
"""

from __future__ import annotations

from typing import Any

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, output


def import_cycles(graph: ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other (a strongly connected component), sorted."""
    found: list[list[str]] = []
    placed: set[str] = set()
    for module in sorted(graph.modules):
        if module in placed:
            continue
        # Imported by `module` (transitively) and importing it (transitively): its component.
        circle = graph.find_upstream_modules(module) & graph.find_downstream_modules(module)
        if circle:
            members = sorted(circle | {module})
            placed.update(members)
            found.append(members)
    return found


class NoImportCyclesContract(Contract):
    type_name = "no_import_cycles"

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        cycles = import_cycles(graph)
        return ContractCheck(kept=not cycles, warnings=[], metadata={"cycles": cycles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        cycles: Any = check.metadata["cycles"]
        for members in cycles:
            output.print_error(f"Import cycle of {len(members)} modules:")
            output.new_line()
            for member in members:
                output.indent_cursor()
                output.print_error(f"- {member}")
            output.new_line()
