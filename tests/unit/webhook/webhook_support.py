"""Helpers for the webhook tests: AdmissionReviews as the API server sends them, and an HTTPS client.

``review`` builds the JSON kube-apiserver posts for a JobFlow (``admission.k8s.io/v1``, the
object as stored, ``?timeout=10s`` on the path); ``WebhookClient`` posts it over TLS to a real
``WebhookServer``, trusting the test CA, and returns the status, headers and body.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobflow_controller.local.certs import TinyCA, write

JSON = "application/json"


def flow(name: str, *targets: str) -> dict[str, Any]:
    """One entry of ``spec.flows``: ``name`` waiting for ``targets``."""
    if not targets:
        return {"name": name}
    return {"name": name, "dependsOn": {"targets": list(targets)}}


def job_flow(*flows: dict[str, Any], name: str = "jobflow", namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": namespace, "uid": str(uuid.uuid4())},
        "spec": {"jobRetainPolicy": "retain", "flows": list(flows)},
    }


def review(
    obj: dict[str, Any] | None,
    *,
    operation: str = "CREATE",
    old: dict[str, Any] | None = None,
    resource: tuple[str, str, str] = ("flow.volcano.sh", "v1alpha1", "jobflows"),
    uid: str | None = None,
) -> dict[str, Any]:
    """The AdmissionReview kube-apiserver sends for ``operation`` on ``obj``."""
    group, version, plural = resource
    metadata = (obj or old or {}).get("metadata", {})
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid or str(uuid.uuid4()),
            "kind": {"group": group, "version": version, "kind": "JobFlow"},
            "resource": {"group": group, "version": version, "resource": plural},
            "requestKind": {"group": group, "version": version, "kind": "JobFlow"},
            "requestResource": {"group": group, "version": version, "resource": plural},
            "name": metadata.get("name", ""),
            "namespace": metadata.get("namespace", ""),
            "operation": operation,
            "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
            "object": obj,
            "oldObject": old,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": f"{operation.title()}Options"},
        },
    }


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()


@dataclass(frozen=True)
class ServingCerts:
    """A CA and a serving pair for 127.0.0.1, written to files as a Secret would be mounted."""

    ca_pem: bytes
    cert_file: Path
    key_file: Path


def serving_certs(directory: Path, ca: TinyCA | None = None) -> ServingCerts:
    ca = ca or TinyCA("webhook-test-ca")
    pair = ca.issue("jobflow-controller-webhook", server=True, dns_names=("localhost",), ips=("127.0.0.1",))
    cert = write(directory / "tls.crt", pair.cert_pem)
    key = write(directory / "tls.key", pair.key_pem, private=True)
    return ServingCerts(ca.cert_pem, cert, key)


class WebhookClient:
    """HTTPS requests to a webhook on 127.0.0.1, trusting ``ca_pem`` only."""

    def __init__(self, port: int, ca_pem: bytes) -> None:
        self.port = port
        self.ca_pem = ca_pem
        self.context = ssl.create_default_context(cadata=ca_pem.decode())

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()

    def raw(self, data: bytes, *, context: ssl.SSLContext | None = None) -> bytes:
        """Send ``data`` as it is over TLS and return everything the server sends until it closes."""
        with (
            socket.create_connection(("127.0.0.1", self.port), timeout=10) as plain,
            (context or self.context).wrap_socket(plain, server_hostname="127.0.0.1") as tls,
        ):
            tls.sendall(data)
            chunks = []
            while chunk := tls.recv(65536):
                chunks.append(chunk)
            return b"".join(chunks)

    def post(self, body: bytes, content_type: str | None = JSON, path: str = "/jobflows/validate?timeout=10s") -> Reply:
        headers = {"Content-Type": content_type} if content_type is not None else {}
        return self.request("POST", path, body, headers)

    def review(self, admission_review: dict[str, Any]) -> dict[str, Any]:
        """Post ``admission_review``, expect 200, and return the answer's ``response``."""
        reply = self.post(json.dumps(admission_review).encode())
        assert reply.status == 200, reply.text
        answer: dict[str, Any] = reply.json()
        assert answer["apiVersion"] == "admission.k8s.io/v1"
        assert answer["kind"] == "AdmissionReview"
        response: dict[str, Any] = answer["response"]
        return response
