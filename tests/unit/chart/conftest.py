"""Puts hack/ on sys.path, so that the chart tests import hack/gen_chart.py as ``gen_chart``."""

from __future__ import annotations

import sys
from pathlib import Path

HACK_DIR = Path(__file__).resolve().parents[3] / "hack"
if str(HACK_DIR) not in sys.path:
    sys.path.insert(0, str(HACK_DIR))
