"""`python -m kubectl_jobflow`, the same command as `kubectl-jobflow`."""

import sys

from kubectl_jobflow.cli import main

if __name__ == "__main__":
    sys.exit(main())
