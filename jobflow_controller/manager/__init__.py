"""The controller manager: `jobflow-controller` parses its flags here and runs until a signal."""

from __future__ import annotations

import sys

from jobflow_controller import __version__


def main(argv: list[str] | None = None) -> int:
    from jobflow_controller.manager import logs
    from jobflow_controller.manager import options as opts

    options, version = opts.parse(sys.argv[1:] if argv is None else argv)
    if version:
        print(f"jobflow-controller {__version__}")
        return 0
    logs.configure(options.log_format, options.verbosity)
    from jobflow_controller.kube.config import ConfigError
    from jobflow_controller.manager.server import Manager, install_signal_handlers

    try:
        manager = Manager(options)
    except ConfigError as err:
        print(f"jobflow-controller: error: {err}", file=sys.stderr)
        return 1
    install_signal_handlers(manager.stop)
    return manager.run()


__all__ = ["main"]
