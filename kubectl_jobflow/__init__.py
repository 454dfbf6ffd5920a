"""The `kubectl jobflow` plugin (console script `kubectl-jobflow`): a JobFlow's DAG as a tree or as DOT.

`view` reads a JobFlow and its Jobs into rows, `render` draws them, `cli` is the command. It talks to
the API through the project's own client (`kube`), never the kubernetes models.
"""

from kubectl_jobflow.cli import main

__all__ = ["main"]
