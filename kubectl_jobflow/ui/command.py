"""`kubectl jobflow ui`: start the caches and the loopback server, print the URL, open the browser,
serve until Ctrl-C.

    kubectl jobflow ui [-n NAMESPACE | -A] [--port N] [--no-browser]

No component is installed in the cluster: the UI runs on the user's machine with the user's
kubeconfig, so it sees and may do exactly what `kubectl` would let the user see and do. The browser
is opened through a 0600 redirect file (launch.py), so the token is not in its command line.
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, TextIO

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import ConfigError, build_client_config
from jobflow_controller.kube.resources import JOB_FLOWS
from jobflow_controller.kube.rest import RestClient, default_user_agent
from kubectl_jobflow.ui.backend import Backend
from kubectl_jobflow.ui.cache import LiveCache
from kubectl_jobflow.ui.launch import RedirectFile, open_browser
from kubectl_jobflow.ui.server import UIServer

#: How long the JobFlow and Job caches may take to fill before the command gives up.
SYNC_TIMEOUT = 60.0


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    ui = sub.add_parser(
        "ui", parents=[common], help="a live web view of the JobFlows and their DAGs, served on 127.0.0.1"
    )
    ui.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace (default: the context's)")
    ui.add_argument("--port", type=_port, default=0, help="the local port (default: any free one)")
    ui.add_argument("--no-browser", action="store_true", help="print the URL only; do not open a browser")


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be a port number, 0 to 65535")
    return value


@dataclass
class Session:
    """A running UI: its REST client, caches and server, stopped together."""

    rest: RestClient
    cache: LiveCache
    server: UIServer
    stop: threading.Event

    def close(self) -> None:
        self.server.shutdown()
        self.stop.set()
        self.cache.shutdown()
        self.rest.close()


def open_session(configuration: Any, namespace: str | None, port: int = 0) -> Session:
    """Check access, fill the caches, and serve; the caller closes the session."""
    configuration.retries = False
    rest = RestClient(configuration, qps=20, burst=40, user_agent=default_user_agent("kubectl-jobflow"))
    stop = threading.Event()
    try:
        # One plain request first, so a wrong server, credentials or RBAC is one clear error.
        rest.request("GET", JOB_FLOWS.path(namespace), query={"limit": 1})
        clientset = Clientset(rest)
        cache = LiveCache(clientset, namespace)
        cache.start(stop)
        deadline = time.monotonic() + SYNC_TIMEOUT
        while not (cache.flows.has_synced() and cache.jobs.has_synced()):
            if time.monotonic() > deadline:
                raise ConfigError("the JobFlow and Job caches did not fill in time (may you list Volcano Jobs?)")
            time.sleep(0.05)
        server = UIServer(Backend(cache, clientset), port)
    except BaseException:
        stop.set()
        rest.close()
        raise
    server.start()
    return Session(rest, cache, server, stop)


def run(args: argparse.Namespace, stdout: TextIO) -> int:
    namespace = getattr(args, "namespace", None)
    if namespace and args.all_namespaces:
        raise ConfigError("--namespace and --all-namespaces cannot be used together")
    configuration, default_namespace = build_client_config(
        getattr(args, "kubeconfig", None), getattr(args, "context", None)
    )
    scope = None if args.all_namespaces else (namespace or default_namespace)
    session = open_session(configuration, scope, args.port)
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (a service manager, `kill`) stops as cleanly as Ctrl-C does.
        signal.signal(signal.SIGTERM, lambda *_: session.stop.set())
    redirect: RedirectFile | None = None
    try:
        where = "all namespaces" if scope is None else f'namespace "{scope}"'
        stdout.write(f"JobFlows of {where} at {session.server.url}\n(Ctrl-C to stop)\n")
        stdout.flush()
        if not args.no_browser:
            redirect = open_browser(session.server.url)
        while not session.stop.wait(0.5):
            pass
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        if redirect is not None:
            redirect.remove()
        session.close()
