"""What the manager gives the JobFlowTrigger controller beyond the common `ControllerOption`: the
kinds it may watch, its HTTP endpoint and the client its firings go through."""

from __future__ import annotations

from dataclasses import dataclass

from jobflow_controller.jobflowtrigger.auth import Authenticator
from jobflow_controller.jobflowtrigger.server import Triggers, TriggerServer
from jobflow_controller.kube.clientset import Clientset


@dataclass(frozen=True)
class TriggerEndpoint:
    """Where and how the HTTP endpoint is served (`--trigger-address` and its certificate flags); its
    TokenReviews and SubjectAccessReviews go through `clientset`, a client with a QPS budget of its own,
    so a flood of callers cannot spend the controllers' budget."""

    address: tuple[str, int]
    clientset: Clientset
    cert_file: str | None = None
    key_file: str | None = None

    def serve(self, controller: Triggers) -> TriggerServer:
        auth = Authenticator(self.clientset)
        return TriggerServer(self.address, auth, controller, cert_file=self.cert_file, key_file=self.key_file)


@dataclass(frozen=True)
class TriggerSettings:
    """What the manager gives the trigger controller beyond the common options: the kinds it may
    watch (--trigger-watch-kinds), its endpoint (--trigger-address, None: off) and the client its
    firings go through (None: the controllers' own)."""

    watch_kinds: tuple[str, ...] = ()
    endpoint: TriggerEndpoint | None = None
    runs_clientset: Clientset | None = None
