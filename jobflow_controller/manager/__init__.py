"""The controller manager: `jobflow-controller` parses its flags here and runs until a signal."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from jobflow_controller import __version__

if TYPE_CHECKING:
    from jobflow_controller.manager.options import ParsedCommandLine


def log_what_is_ignored(parsed: ParsedCommandLine) -> None:
    """One info line naming the flags given that configure nothing here and the non-flag arguments;
    a warning for names in --controllers that no Volcano controller has (upstream ignores them)."""
    import structlog

    from jobflow_controller.manager.config import unknown_controllers

    log = structlog.get_logger("jobflow_controller.manager")
    if parsed.ignored_flags or parsed.ignored_args:
        log.info(
            "accepted as vc-controller-manager does; no effect here",
            flags=parsed.ignored_flags,
            arguments=parsed.ignored_args,
        )
    unknown = unknown_controllers(parsed.options.controllers)
    if unknown:
        log.warning("--controllers names no Volcano controller; ignored, as upstream ignores it", entries=unknown)


def main(argv: list[str] | None = None) -> int:
    from jobflow_controller.manager import logs
    from jobflow_controller.manager import options as opts

    parsed = opts.parse_command_line(sys.argv[1:] if argv is None else argv)
    if parsed.version:
        print(f"jobflow-controller {__version__}")
        return 0
    options = parsed.options
    logs.configure(options.log_format, options.verbosity)
    log_what_is_ignored(parsed)
    from jobflow_controller.manager.heap_snapshots import install_from_environment

    install_from_environment()
    from jobflow_controller.kube.config import ConfigError
    from jobflow_controller.manager.server import Manager
    from jobflow_controller.manager.signals import install_signal_handlers

    try:
        manager = Manager(options)
    except ConfigError as err:
        print(f"jobflow-controller: error: {err}", file=sys.stderr)
        return 1
    install_signal_handlers(manager.stop)
    return manager.run()


__all__ = ["log_what_is_ignored", "main"]
