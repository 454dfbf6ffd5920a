"""The UI's session is scoped to its own server (issue 42, item 7).

SameSite=Strict treats every `127.0.0.1:<port>` as one site and a cookie is not scoped by port, so
the session cookie alone would be sent to, and ride the requests of, any other local web app.
Everything is served under a secret path prefix, the cookie's `Path`; a request outside it, or one
the browser says comes from another origin, is refused whatever it carries.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_ui_server import TOKEN, FakeBackend

from kubectl_jobflow.ui.auth import TOKEN_HEADER, Credentials, foreign
from kubectl_jobflow.ui.server import UIServer

STATIC = Path(__file__).parents[3] / "kubectl_jobflow" / "ui" / "static"
OTHER_PORT = "http://127.0.0.1:8888"


@pytest.fixture
def server() -> Iterator[UIServer]:
    ui = UIServer(FakeBackend(), token=TOKEN)  # type: ignore[arg-type]
    ui.start()
    yield ui
    ui.shutdown()


def send(ui: UIServer, path: str, headers: dict[str, str], method: str = "GET", body: str | None = None) -> int:
    """The status of a request for `path` exactly as given (the prefix included or not)."""
    conn = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=10)
    conn.request(method, path, body=body, headers={"Host": f"127.0.0.1:{ui.port}", **headers})
    status = conn.getresponse().status
    conn.close()
    return status


def cookie_of(ui: UIServer) -> dict[str, str]:
    conn = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=10)
    conn.request("GET", f"{ui.credentials.prefix}?token={TOKEN}", headers={"Host": f"127.0.0.1:{ui.port}"})
    response = conn.getresponse()
    cookie = str(response.getheader("Set-Cookie")).split(";")[0]
    conn.close()
    return {"Cookie": cookie}


@pytest.mark.parametrize("path", ["/", "/api/list", "/static/app.js", "/api/stream/list", "/?token=" + TOKEN])
def test_a_request_outside_the_prefix_is_refused_with_the_cookie_or_the_token(server: UIServer, path: str) -> None:
    cookie = cookie_of(server)
    assert send(server, path, cookie) == 404
    assert send(server, path, {TOKEN_HEADER: TOKEN}) == 404


def test_a_wrong_or_partial_prefix_is_outside(server: UIServer) -> None:
    prefix = server.credentials.prefix
    cookie = cookie_of(server)
    for wrong in (prefix[:-1], prefix[:-2] + "/", prefix.upper() + "api/list", "/x" + prefix + "api/list"):
        assert send(server, wrong, cookie) == 404, wrong
    assert send(server, prefix + "api/list", cookie) == 200


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 200),  # a client that says nothing of where it comes from: its credentials decide
        ({"Sec-Fetch-Site": "same-origin"}, 200),
        ({"Sec-Fetch-Site": "none"}, 200),  # the user typed the address or reloaded the page
        ({"Origin": "http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}, 200),
        ({"Sec-Fetch-Site": "same-site"}, 403),  # another port of 127.0.0.1: SameSite=Strict lets it through
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({"Origin": OTHER_PORT}, 403),
        ({"Origin": "null"}, 403),
    ],
)
def test_a_request_from_another_origin_is_refused_even_with_the_cookie(
    server: UIServer, headers: dict[str, str], status: int
) -> None:
    given = {name: value.format(port=server.port) for name, value in headers.items()}
    cookie = cookie_of(server)
    for path in ("api/list", "api/stream/jobflow?key=ns/p", "static/app.js", ""):
        assert send(server, server.credentials.prefix + path, {**cookie, **given}) == status, path


def test_an_action_from_another_port_is_refused_with_the_cookie(server: UIServer) -> None:
    headers = {**cookie_of(server), "Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}
    body = '{"key": "ns/p", "action": "stop"}'
    assert send(server, server.credentials.prefix + "api/action", headers, "POST", body) == 403
    assert (
        send(server, server.credentials.prefix + "api/action", {**headers, "Origin": OTHER_PORT}, "POST", body) == 403
    )
    assert server.backend.acted == []  # type: ignore[attr-defined]


def test_the_entry_url_with_its_token_may_come_from_the_redirect_file(server: UIServer) -> None:
    """The browser is sent there by a file:// page: another site, but the token is the proof."""
    entry = f"{server.credentials.prefix}?token={TOKEN}"
    assert send(server, entry, {"Sec-Fetch-Site": "cross-site"}) == 200
    assert send(server, server.credentials.prefix, {"Sec-Fetch-Site": "cross-site", TOKEN_HEADER: TOKEN}) == 403


def test_each_session_has_its_own_secret_prefix() -> None:
    prefixes = {Credentials(1).prefix for _ in range(50)}
    assert len(prefixes) == 50
    assert all(p.startswith("/") and p.endswith("/") and len(p) == 24 for p in prefixes)


def test_inside_gives_the_path_below_the_prefix() -> None:
    credentials = Credentials(1)
    prefix = credentials.prefix
    assert credentials.inside(prefix) == "/"
    assert credentials.inside(prefix + "api/list") == "/api/list"
    assert credentials.inside(prefix[:-1]) is None
    assert credentials.inside("/api/list") is None


def test_foreign_names_the_header_that_refuses() -> None:
    own = {"http://127.0.0.1:1"}
    assert foreign(None, None, own) is None
    assert foreign("http://127.0.0.1:1", "same-origin", own) is None
    assert foreign("http://127.0.0.1:2", None, own) == "unexpected Origin"
    assert foreign(None, "same-site", own) == "a request from another origin (Sec-Fetch-Site)"


def test_the_page_names_its_assets_and_api_relative_to_the_prefix() -> None:
    html = (STATIC / "index.html").read_text()
    scripts = "".join((STATIC / name).read_text() for name in ("app.js", "cron.js", "dag.js", "triggers.js"))
    assert 'src="static/app.js"' in html and 'href="static/app.css"' in html
    assert 'src="/' not in html and 'href="/' not in html
    assert '"/api' not in scripts and "'/api" not in scripts
