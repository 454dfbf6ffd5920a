"""A Python process in which `cryptography` and `kubernetes_validate` cannot be imported.

Both are installed in the test environment (the `test` and `local` extras need them), so the lean
runtime (issue 12, part 6) is proved by taking them away from a child process: `environment()`
gives it a `sitecustomize` that puts `Blocker` ahead of every other meta-path finder before the
child runs anything of its own, so the real console script runs unchanged. The child says on
stderr that the block is in place (INSTALLED) and names every import it refused and the file that
asked for it (REFUSED): a test can tell "never tried to import them" from "tried and coped", and who
tried.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

BLOCKED = ("cryptography", "kubernetes_validate")
INSTALLED = "import-blocker: installed, refusing " + ", ".join(BLOCKED)
REFUSED = "import-blocker: refused "

SITECUSTOMIZE = """\
import importlib.util

_spec = importlib.util.spec_from_file_location("import_blocker", {path!r})
_blocker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_blocker)
_blocker.install()
"""


class Blocker(importlib.abc.MetaPathFinder):
    """A meta-path finder ahead of every other: these modules cannot be imported at all."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in BLOCKED:
            print(f"{REFUSED}{fullname} (imported from {_importer()})", file=sys.stderr, flush=True)
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked by the test)", name=fullname)
        return None


def _importer() -> str:
    """The file of the innermost frame that is neither this module nor the import machinery."""
    for frame in reversed(traceback.extract_stack()):
        if frame.filename != __file__ and not frame.filename.startswith("<frozen "):
            return frame.filename
    return "?"


def install() -> None:
    sys.meta_path.insert(0, Blocker())
    for loaded in [m for m in sys.modules if m.partition(".")[0] in BLOCKED]:
        del sys.modules[loaded]
    print(INSTALLED, file=sys.stderr, flush=True)


def environment(directory: Path) -> dict[str, str]:
    """This process's environment, plus a `sitecustomize` in `directory` that installs the block."""
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE.format(path=str(Path(__file__).resolve())))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(directory), env.get("PYTHONPATH")) if p)
    return env
