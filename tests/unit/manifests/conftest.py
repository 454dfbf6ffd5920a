"""Puts hack/ on sys.path, so that the manifest tests import the CRD generator as ``crdgen``.

The generator is a build tool, not part of the package the image ships: it lives in hack/crdgen/,
which is not installed, and hack/gen_crds.py imports it the same way (as its own directory).
"""

from __future__ import annotations

import sys
from pathlib import Path

HACK_DIR = Path(__file__).resolve().parents[3] / "hack"
if str(HACK_DIR) not in sys.path:
    sys.path.insert(0, str(HACK_DIR))
