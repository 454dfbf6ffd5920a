"""A real, local Kubernetes control plane: etcd, kube-apiserver and kube-controller-manager.

Started the way controller-runtime's envtest starts one (free loopback ports, a temporary data
directory, etcd without fsync, a private CA, an admin client certificate), plus the controller
manager so that garbage collection, namespace deletion and service-account tokens behave as in a
cluster. Every process runs in its own process group with its log in a file, so a failing test can
print what the server said and teardown can never leave an orphan behind.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jobflow_controller.local import certs
from jobflow_controller.local.processes import Process, free_port

#: The Kubernetes release hack/build-control-plane.sh builds (its K8S_VERSION), naming the cache folder.
K8S_VERSION = "1.37.2"

#: Controllers of kube-controller-manager we need: what a test of a JobFlow controller relies on
#: (owner-reference garbage collection, namespace cleanup, service accounts and their tokens).
KCM_CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
)

_REPO_ROOT = Path(__file__).resolve().parents[2]


class ControlPlaneError(RuntimeError):
    """The control plane could not be started; the message says which process and why."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jobflow-controller" / "control-plane" / f"v{K8S_VERSION}"


def find_binaries(build: bool = True) -> Path:
    """The folder holding etcd, kube-apiserver and kube-controller-manager.

    `KUBEBUILDER_ASSETS` wins when it holds all three (a developer's envtest install); otherwise the
    versioned cache, built on first use by `hack/build-control-plane.sh`.
    """
    names = ("etcd", "kube-apiserver", "kube-controller-manager")
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    if assets and all(os.access(Path(assets) / n, os.X_OK) for n in names):
        return Path(assets)
    out = cache_dir()
    if all(os.access(out / n, os.X_OK) for n in names):
        return out
    script = _REPO_ROOT / "hack" / "build-control-plane.sh"
    if not build or not script.exists():
        raise ControlPlaneError(
            f"control-plane binaries not found in {out} (run `make control-plane` or set KUBEBUILDER_ASSETS)"
        )
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ControlPlaneError(f"building the control plane failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


@dataclass
class ControlPlane:
    """etcd + kube-apiserver (+ kube-controller-manager) on loopback, with an admin kubeconfig.

    `root_dir` defaults to a fresh temporary directory that `stop()` removes; pass one to keep the
    state (the `up` command does, so `down` can find the processes).
    """

    bin_dir: Path | None = None
    root_dir: Path | None = None
    controller_manager: bool = True
    apiserver_args: Sequence[str] = ()
    start_timeout: float = 120.0
    processes: dict[str, Process] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._own_root = self.root_dir is None
        self.root = Path(self.root_dir or tempfile.mkdtemp(prefix="jobflow-cp-"))
        self.pki = self.root / "pki"
        self.etcd_port = free_port()
        self.etcd_peer_port = free_port()
        self.apiserver_port = free_port()
        self.kcm_port = free_port()
        self.kubeconfig_path = self.root / "kubeconfig"

    # -- addresses -----------------------------------------------------------------------------
    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def ca_path(self) -> Path:
        return self.pki / "ca.crt"

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> ControlPlane:
        bins = self.bin_dir or find_binaries()
        self.bin_dir = bins
        try:
            self._write_pki()
            self._start_etcd()
            self._start_apiserver()
            self._write_kubeconfig()
            self._wait_api_usable()
            if self.controller_manager:
                self._start_controller_manager()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for name in ("kube-controller-manager", "kube-apiserver", "etcd"):
            proc = self.processes.get(name)
            if proc:
                proc.stop()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def restart_apiserver(self) -> None:
        """Stop and start kube-apiserver on the same port against the same etcd (a server restart)."""
        self.processes["kube-apiserver"].stop()
        self._start_apiserver()
        self._wait_api_usable()

    def logs(self) -> str:
        """Every process's log tail, for a failing test's report."""
        parts = []
        for name, proc in self.processes.items():
            parts.append(f"===== {name} ({proc.log_path}) =====\n{proc.log_tail()}")
        return "\n".join(parts)

    # -- etcd helpers for fault tests ------------------------------------------------------------
    def etcd_revision(self) -> int:
        body = {"key": base64.b64encode(b"/").decode(), "limit": 1}
        header: Any = self._etcd_post("/v3/kv/range", body)["header"]
        return int(header["revision"])

    def compact_etcd(self, revision: int | None = None) -> int:
        """Compact etcd to `revision` (default: the current one), so older watches get 410 Gone."""
        rev = revision if revision is not None else self.etcd_revision()
        self._etcd_post("/v3/kv/compaction", {"revision": str(rev), "physical": True})
        return rev

    def _etcd_post(self, path: str, body: dict[str, object]) -> dict[str, object]:
        req = urllib.request.Request(
            self.etcd_url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            reply: dict[str, object] = json.loads(resp.read())
            return reply

    # -- internals ------------------------------------------------------------------------------
    def _write_pki(self) -> None:
        self.pki.mkdir(parents=True, exist_ok=True)
        ca = certs.TinyCA()
        certs.write(self.ca_path, ca.cert_pem)
        serving = ca.issue(
            "kube-apiserver",
            server=True,
            dns_names=("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"),
            ips=("127.0.0.1", "10.0.0.1"),
        )
        certs.write(self.pki / "apiserver.crt", serving.cert_pem)
        certs.write(self.pki / "apiserver.key", serving.key_pem, private=True)
        admin = ca.issue("admin", organization="system:masters", client=True)
        certs.write(self.pki / "admin.crt", admin.cert_pem)
        certs.write(self.pki / "admin.key", admin.key_pem, private=True)
        # system:masters: with --use-service-account-credentials=false the garbage collector acts as this
        # user and must be able to list and delete every resource.
        kcm = ca.issue("system:kube-controller-manager", organization="system:masters", client=True)
        certs.write(self.pki / "kcm.crt", kcm.cert_pem)
        certs.write(self.pki / "kcm.key", kcm.key_pem, private=True)
        sa_private, sa_public = certs.service_account_key_pair()
        certs.write(self.pki / "sa.key", sa_private, private=True)
        certs.write(self.pki / "sa.pub", sa_public)

    def _process(self, name: str, args: list[str]) -> Process:
        proc = Process(name, args, self.root / f"{name}.log")
        self.processes[name] = proc
        proc.start()
        return proc

    def _start_etcd(self) -> None:
        assert self.bin_dir is not None
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        proc = self._process(
            "etcd",
            [
                str(self.bin_dir / "etcd"),
                "--name=local",
                f"--data-dir={self.root / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=local={peer}",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
            ],
        )
        self._wait(proc, lambda: b'"health":"true"' in _get(self.etcd_url + "/health"), "etcd /health")

    def _start_apiserver(self) -> None:
        assert self.bin_dir is not None
        args = [
            str(self.bin_dir / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.apiserver_port}",
            f"--cert-dir={self.root / 'certdir'}",
            f"--tls-cert-file={self.pki / 'apiserver.crt'}",
            f"--tls-private-key-file={self.pki / 'apiserver.key'}",
            f"--client-ca-file={self.ca_path}",
            f"--service-account-issuer={self.server}",
            f"--service-account-key-file={self.pki / 'sa.pub'}",
            f"--service-account-signing-key-file={self.pki / 'sa.key'}",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--authorization-mode=RBAC",
            "--allow-privileged=true",
            "--disable-admission-plugins=ServiceAccount",
            # As production clusters that enforce it: setting blockOwnerDeletion on a Job needs `update`
            # on the owner's finalizers, so the RBAC tests prove that jobflows/finalizers is granted.
            "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
            "--endpoint-reconciler-type=none",
            "--profiling=false",
            # Lets kube-controller-manager's delegated authentication find a request-header CA in
            # kube-system/extension-apiserver-authentication instead of logging its absence forever.
            f"--requestheader-client-ca-file={self.ca_path}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            *self.apiserver_args,
        ]
        proc = self._process("kube-apiserver", args)
        ctx = ssl.create_default_context(cafile=str(self.ca_path))
        self._wait(proc, lambda: _get(self.server + "/readyz", ctx).strip() == b"ok", "kube-apiserver /readyz")

    def _write_kubeconfig(self, path: Path | None = None, user: str = "admin") -> Path:
        path = path or self.kubeconfig_path
        crt = (self.pki / f"{user}.crt").read_bytes()
        key = (self.pki / f"{user}.key").read_bytes()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "local",
                    "cluster": {
                        "server": self.server,
                        "certificate-authority-data": base64.b64encode(self.ca_path.read_bytes()).decode(),
                    },
                }
            ],
            "users": [
                {
                    "name": user,
                    "user": {
                        "client-certificate-data": base64.b64encode(crt).decode(),
                        "client-key-data": base64.b64encode(key).decode(),
                    },
                }
            ],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
            "current-context": "local",
        }
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path

    def _wait_api_usable(self) -> None:
        """Wait until the admin can read the `default` namespace, as envtest does."""
        ctx = ssl.create_default_context(cafile=str(self.ca_path))
        ctx.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))
        proc = self.processes["kube-apiserver"]
        self._wait(proc, lambda: b'"default"' in _get(self.server + "/api/v1/namespaces/default", ctx), "namespace")

    def _start_controller_manager(self) -> None:
        assert self.bin_dir is not None
        kubeconfig = self._write_kubeconfig(self.root / "kcm.kubeconfig", user="kcm")
        proc = self._process(
            "kube-controller-manager",
            [
                str(self.bin_dir / "kube-controller-manager"),
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.kcm_port}",
                f"--cert-dir={self.root / 'kcm-certs'}",
                f"--controllers={','.join(KCM_CONTROLLERS)}",
                f"--service-account-private-key-file={self.pki / 'sa.key'}",
                f"--root-ca-file={self.ca_path}",
                "--use-service-account-credentials=false",
                "--leader-elect=false",
                "--concurrent-gc-syncs=5",
            ],
        )
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        url = f"https://127.0.0.1:{self.kcm_port}/healthz"
        self._wait(proc, lambda: _get(url, ctx).strip() == b"ok", "kube-controller-manager /healthz")

    def _wait(self, proc: Process, check: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if not proc.alive():
                raise ControlPlaneError(f"{proc.name} exited while waiting for {what}:\n{proc.log_tail()}")
            try:
                if check():
                    return
            except (OSError, urllib.error.URLError, ssl.SSLError):
                pass
            time.sleep(0.1)
        raise ControlPlaneError(f"timed out after {self.start_timeout:.0f}s waiting for {what}:\n{proc.log_tail()}")


def _get(url: str, ctx: ssl.SSLContext | None = None) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=5, context=ctx) as resp:
            data: bytes = resp.read()
            return data
    except urllib.error.HTTPError:
        return b""
