"""`kubectl jobflow ui`'s token (issue 33): exchanged for an HttpOnly, SameSite=Strict cookie on the
entry URL and dropped from the address bar; the browser opened through a 0600 redirect file, so the
token is never in its command line."""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ui_server import TOKEN, FakeBackend

from kubectl_jobflow.ui import command
from kubectl_jobflow.ui.auth import Credentials
from kubectl_jobflow.ui.launch import RedirectFile, open_browser, redirect_page
from kubectl_jobflow.ui.server import UIServer


@pytest.fixture
def server() -> Iterator[UIServer]:
    ui = UIServer(FakeBackend(), token=TOKEN)  # type: ignore[arg-type]
    ui.start()
    yield ui
    ui.shutdown()


def get(ui: UIServer, path: str, cookie: str | None = None, method: str = "GET", body: Any = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=10)
    headers = {"Host": f"127.0.0.1:{ui.port}"}
    path = ui.credentials.prefix + path.removeprefix("/")  # the session's secret prefix
    if cookie is not None:
        headers["Cookie"] = cookie
    if body is not None:
        headers["Content-Type"] = "application/json"
        headers["Origin"] = f"http://127.0.0.1:{ui.port}"
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    result = response.status, dict(response.getheaders()), response.read()
    conn.close()
    return result


def session_cookie(ui: UIServer) -> str:
    code, headers, _ = get(ui, f"/?token={TOKEN}")
    assert code == 200
    return str(headers["Set-Cookie"]).split(";")[0]


def test_the_entry_url_sets_an_http_only_same_site_strict_cookie_that_is_not_the_token(server: UIServer) -> None:
    _, headers, _ = get(server, f"/?token={TOKEN}")
    name, _, rest = headers["Set-Cookie"].partition("=")
    value, *attributes = [part.strip() for part in rest.split(";")]
    assert name == f"jobflow-ui-{server.port}"
    assert value and value != TOKEN and len(value) >= 32
    # no Max-Age: the session's; Path: only requests under the secret prefix carry it
    assert sorted(attributes) == ["HttpOnly", f"Path={server.credentials.prefix}", "SameSite=Strict"]


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/static/app.css", "/api/list", "/api/jobflow?key=ns/p"])
def test_the_cookie_alone_opens_every_page_and_no_other_cookie_does(server: UIServer, path: str) -> None:
    cookie = session_cookie(server)
    code, headers, _ = get(server, path, cookie=f"other=1; {cookie}")
    assert code == 200 and "Set-Cookie" not in headers
    name, value = cookie.split("=", 1)
    for wrong in (f"{name}={value[:-1]}", f"{name}={TOKEN}", f"jobflow-ui-1={value}", "", f"{name}="):
        assert get(server, path, cookie=wrong)[0] == 403, wrong


def test_an_action_is_sent_with_the_cookie(server: UIServer) -> None:
    cookie = session_cookie(server)
    code, _, body = get(server, "/api/action", cookie, "POST", {"key": "ns/p", "action": "stop"})
    assert (code, json.loads(body)) == (200, {"message": "stop sent to ns/p"})


def test_the_page_drops_the_token_from_the_address_bar_before_anything_else() -> None:
    script = (Path(__file__).parents[3] / "kubectl_jobflow/ui/static/app.js").read_text()
    body = script[script.index("(function () {") :]
    first_statement = body.splitlines()[1].strip()
    assert first_statement == 'if (location.search) history.replaceState(null, "", location.pathname + location.hash);'
    assert "token" not in body.lower().replace("the entry url's token", "")


@pytest.mark.parametrize(
    ("given", "ok"),
    [(TOKEN, True), (TOKEN + "x", False), ("", False), (None, False), ("t\u00f6ken", False), ("\udcff", False)],
)
def test_the_token_is_compared_in_constant_time_whatever_the_text(given: str | None, ok: bool) -> None:
    assert Credentials(1, TOKEN).token_ok(given) is ok


# -- the redirect file -------------------------------------------------------------------------
def test_the_browser_is_given_a_private_file_that_sends_it_on_and_never_the_token(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:4242/?token={TOKEN}"
    opened: list[str] = []
    redirect = RedirectFile(url)
    try:
        open_browser(redirect, opened.append)
        assert opened == [redirect.uri] and redirect.uri.startswith("file://")
        assert TOKEN not in opened[0]
        assert stat.S_IMODE(os.stat(redirect.path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(redirect.directory).st_mode) == 0o700
        page = redirect.path.read_text()
        assert f'<meta http-equiv="refresh" content="0;url={url}">' in page
        assert '<meta name="referrer" content="no-referrer">' in page
    finally:
        redirect.remove()
    assert not redirect.directory.exists()


def test_the_redirect_page_escapes_the_url() -> None:
    page = redirect_page('http://127.0.0.1:1/?token=a"><script>x</script>&b=1')
    assert "<script>" not in page and "&quot;&gt;&lt;script&gt;" in page and "&amp;b=1" in page


def test_the_redirect_file_is_never_written_through_something_already_there(tmp_path: Path) -> None:
    redirect = RedirectFile("http://127.0.0.1:1/?token=t", parent=str(tmp_path))
    try:
        assert redirect.directory.parent == tmp_path and redirect.path.exists()
    finally:
        redirect.remove()


def test_a_ctrl_c_while_the_browser_starts_leaves_no_redirect_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`webbrowser` waits for a `$BROWSER` command, so a Ctrl-C lands inside the opener: the UI made
    the file before calling it, and its `finally` removes it (an e2e run under load found the race)."""
    stopped: list[bool] = []

    class FakeSession:
        server = type("S", (), {"url": f"http://127.0.0.1:1/?token={TOKEN}"})()
        stop = threading.Event()

        def close(self) -> None:
            stopped.append(True)

    def interrupted(redirect: RedirectFile) -> None:
        assert redirect.path.exists()
        raise KeyboardInterrupt

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(command, "build_client_config", lambda *_: (object(), "default"))
    monkeypatch.setattr(command, "open_session", lambda *_: FakeSession())
    monkeypatch.setattr(command, "open_browser", interrupted)
    args = argparse.Namespace(namespace=None, all_namespaces=True, port=0, no_browser=False)
    assert command.run(args, io.StringIO()) == 0
    assert stopped == [True]
    assert list(tmp_path.iterdir()) == []
