"""Structured logging: key=value in a terminal, JSON with --log-format=json, klog-style -v.

The stdlib `logging` of the informers and workqueue packages is routed through the same
renderer, so every line of the process has one format.
"""

from __future__ import annotations

import logging
import sys

import structlog

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
