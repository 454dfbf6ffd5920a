"""One real webhook server (HTTPS on 127.0.0.1, a test CA) for the webhook tests of a module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from webhook_support import ServingCerts, WebhookClient, serving_certs

from jobflow_controller.webhook import WebhookServer


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> ServingCerts:
    return serving_certs(Path(tmp_path_factory.mktemp("webhook-certs")))


@pytest.fixture(scope="module")
def server(certs: ServingCerts) -> Iterator[WebhookServer]:
    with WebhookServer(("127.0.0.1", 0), str(certs.cert_file), str(certs.key_file)) as running:
        yield running


@pytest.fixture
def client(server: WebhookServer, certs: ServingCerts) -> WebhookClient:
    return WebhookClient(server.port, certs.ca_pem)
