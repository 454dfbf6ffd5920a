"""The controller's logging imports structlog without `rich` (issue 47 item 4: 3.9 MiB of RSS).

The CEL library's dependencies install `rich` in the image, and structlog's `dev` module imports it
when it can; `manager/logs.py` hides it while structlog imports. Each case runs in a fresh
interpreter, as the `jobflow-controller` command starts.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_the_command_s_logging_does_not_import_rich() -> None:
    pytest.importorskip("rich")  # installed here (the CEL library's and the dev tools' dependency)
    out = run(
        "import sys\n"
        "from jobflow_controller.manager import main\n"
        "assert main(['--version']) == 0\n"
        "print('rich imported:', [m for m in sys.modules if m.partition('.')[0] == 'rich'][:3])\n"
    )
    assert "rich imported: []" in out


def test_rich_stays_importable_for_anyone_else() -> None:
    pytest.importorskip("rich")
    out = run("from jobflow_controller.manager import logs\nimport rich.console\nprint('ok', rich.console.__name__)\n")
    assert "ok rich.console" in out


def test_an_exception_is_logged_with_its_plain_traceback() -> None:
    """Ours were already (`format_exc_info`); the stdlib loggers' (informers, workqueue) were drawn by
    rich, with every frame's locals: now plain, as ours."""
    out = run(
        "from jobflow_controller.manager import logs\n"
        "import logging, structlog\n"
        "logs.configure()\n"
        "try:\n"
        "    1 / 0\n"
        "except ZeroDivisionError:\n"
        "    structlog.get_logger('t').exception('ours failed', a=1)\n"
        "    logging.getLogger('informers').exception('stdlib failed')\n"
    )
    assert "ours failed" in out and "stdlib failed" in out
    assert out.count("ZeroDivisionError: division by zero") == 2
    assert out.count("Traceback (most recent call last):") == 2
