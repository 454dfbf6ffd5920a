"""The `jobflow-controller` command, Go-style: parse argv, call the manager, exit with its code."""

import sys

from jobflow_controller.manager import main

if __name__ == "__main__":
    sys.exit(main())
