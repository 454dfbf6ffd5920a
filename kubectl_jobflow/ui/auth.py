"""Who may use the UI: the holder of the session's token, or of the cookie it is exchanged for.

The printed URL carries a random token (`/?token=...`). The page it loads sets an HttpOnly,
SameSite=Strict cookie holding a second random value and the page's script removes the token from
the address bar (history.replaceState), so the token does not stay in the address bar, in the
tab's history entry or in a copied link, and no script of the page can read the cookie. Every
later request (scripts, event streams, actions) is authenticated by that cookie, which the browser
sends only with requests made from our own page. Scripts may send the token in the
`X-JobFlow-Token` header instead; the query parameter is honoured on the entry URL (`/`) only.

A cookie is not scoped by port: the browser also sends it to any other server on 127.0.0.1 it
visits, as it does Jupyter's. Its name carries our port, so two UIs at once do not clash.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping

TOKEN_PARAM = "token"
TOKEN_HEADER = "X-JobFlow-Token"
COOKIE_PREFIX = "jobflow-ui-"


def _same(given: str, expected: str) -> bool:
    """Constant-time comparison of any text (hmac.compare_digest refuses non-ASCII str)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())


class Credentials:
    """The session's token and the cookie it is exchanged for."""

    def __init__(self, port: int, token: str | None = None, session: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self.session = session or secrets.token_urlsafe(32)
        self.cookie_name = f"{COOKIE_PREFIX}{port}"

    def token_ok(self, given: str | None) -> bool:
        return bool(given) and _same(str(given), self.token)

    def cookie_ok(self, cookies: Mapping[str, str]) -> bool:
        given = cookies.get(self.cookie_name)
        return bool(given) and _same(str(given), self.session)

    def set_cookie(self) -> str:
        """The Set-Cookie value: for this session only (no Max-Age: gone when the browser closes),
        never readable by scripts, never sent with a request another site makes."""
        return f"{self.cookie_name}={self.session}; Path=/; HttpOnly; SameSite=Strict"

    def allowed(self, path: str, query: Mapping[str, str], header: str | None, cookies: Mapping[str, str]) -> bool:
        """The cookie, the header's token, or on the entry URL the query's token."""
        if self.cookie_ok(cookies) or self.token_ok(header):
            return True
        return path == "/" and self.token_ok(query.get(TOKEN_PARAM))
