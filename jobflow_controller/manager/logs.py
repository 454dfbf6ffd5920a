"""Structured logging: key=value in a terminal, JSON with --log-format=json, klog-style -v.

The stdlib `logging` of the informers and workqueue packages is routed through the same
renderer, so every line of the process has one format.
"""

from __future__ import annotations

import importlib
import logging
import sys
from types import ModuleType


def _structlog_without_rich() -> ModuleType:
    """structlog, imported without `rich` (52 modules, 3.9 MiB of RSS), which its `dev` module imports
    when installed, for tracebacks: the CEL library's dependencies install it in the image, and no line
    of ours is rendered with it (`format_exc_info` formats exceptions before the renderer).

    `rich` is hidden only while structlog imports (None in sys.modules: its `import rich` fails), then
    importable again for anyone else. Whatever imported structlog first (a test, a tool) wins.
    """
    hide = "rich" not in sys.modules and "structlog" not in sys.modules
    if hide:
        sys.modules["rich"] = None  # type: ignore[assignment]
    try:
        return importlib.import_module("structlog")
    finally:
        if hide and sys.modules.get("rich", ModuleType("rich")) is None:
            del sys.modules["rich"]


_structlog_without_rich()

import structlog  # noqa: E402 - after the import above, which decides what structlog sees

#: --log-format: key=value text, or one JSON object per line.
LOG_FORMATS = ("text", "json")
DEFAULT_LOG_FORMAT = "text"


def configure(log_format: str = DEFAULT_LOG_FORMAT, verbosity: int = 0) -> None:
    level = logging.DEBUG if verbosity >= 4 else logging.INFO
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        timestamper,
    ]
    renderer: structlog.types.Processor
    if log_format == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processor=renderer,
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # urllib3 warns on every retried connection; the reflector already logs what matters.
    logging.getLogger("urllib3").setLevel(logging.ERROR)
