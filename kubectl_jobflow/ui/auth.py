"""Who may use the UI: the holder of the session's token, or of the cookie it is exchanged for.

Everything is served under a random path prefix of the session (`/<22 random characters>/`), as
Jupyter serves under its `base_url`, but secret. The printed URL carries a random token
(`/<prefix>/?token=...`). The page it loads sets an HttpOnly, SameSite=Strict cookie holding a
second random value, with `Path=/<prefix>/`, and the page's script removes the token from the address
bar (history.replaceState), so the token does not stay in the address bar, in the tab's history
entry or in a copied link, and no script of the page can read the cookie. Every later request
(scripts, event streams, actions) is authenticated by that cookie. Scripts may send the token in the
`X-JobFlow-Token` header instead; the query parameter is honoured on the entry URL only.

Why the prefix: a cookie is not scoped by port, and SameSite treats every `127.0.0.1:<port>` as one
site, so without it the browser would send the cookie to any other server on 127.0.0.1 it visits
(which could then replay it), and with the requests of any page such a server serves. With
`Path=/<prefix>/` it sends the cookie only to URLs under a path no other server or page knows; and a
request outside the prefix, or that the browser says comes from another origin (`Origin`,
`Sec-Fetch-Site`), is refused whatever it carries. Keeping the token in page memory only was the other
choice; it cannot authenticate the page's `<script>` loads and `EventSource` streams, which send no
custom header. The cookie's name still carries our port, so two UIs at once do not clash.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Container, Mapping

TOKEN_PARAM = "token"
TOKEN_HEADER = "X-JobFlow-Token"
COOKIE_PREFIX = "jobflow-ui-"
#: Random bytes of the path prefix: 128 bits, 22 URL-safe characters.
PREFIX_BYTES = 16
#: What `Sec-Fetch-Site` says of a request of our own page ("none": the user typed or reloaded it).
OWN_FETCH_SITES = frozenset({"same-origin", "none"})


def _same(given: str, expected: str) -> bool:
    """Constant-time comparison of any text (hmac.compare_digest refuses non-ASCII str)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())


class Credentials:
    """The session's token and the cookie it is exchanged for."""

    def __init__(self, port: int, token: str | None = None, session: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self.session = session or secrets.token_urlsafe(32)
        self.cookie_name = f"{COOKIE_PREFIX}{port}"
        self.prefix = f"/{secrets.token_urlsafe(PREFIX_BYTES)}/"

    def inside(self, path: str) -> str | None:
        """The path below the session's prefix (`/` for the prefix itself), or None outside it."""
        end = len(self.prefix)
        if len(path) < end or not _same(path[:end], self.prefix):
            return None
        return "/" + path[end:]

    def token_ok(self, given: str | None) -> bool:
        return bool(given) and _same(str(given), self.token)

    def cookie_ok(self, cookies: Mapping[str, str]) -> bool:
        given = cookies.get(self.cookie_name)
        return bool(given) and _same(str(given), self.session)

    def set_cookie(self) -> str:
        """The Set-Cookie value: for this session only (no Max-Age: gone when the browser closes),
        never readable by scripts, never sent with a request another site makes."""
        return f"{self.cookie_name}={self.session}; Path={self.prefix}; HttpOnly; SameSite=Strict"

    def allowed(self, path: str, query: Mapping[str, str], header: str | None, cookies: Mapping[str, str]) -> bool:
        """The cookie, the header's token, or on the entry URL the query's token (`path` is the
        path below the prefix)."""
        if self.cookie_ok(cookies) or self.token_ok(header):
            return True
        return path == "/" and self.token_ok(query.get(TOKEN_PARAM))


def foreign(origin: str | None, fetch_site: str | None, own_origins: Container[str]) -> str | None:
    """Why the browser says a request comes from another origin (another port of 127.0.0.1
    included, which SameSite lets the cookie ride), or None. A client that sends neither header (a
    script, an older browser) is judged by its credentials alone."""
    if origin is not None and origin not in own_origins:
        return "unexpected Origin"
    if fetch_site is not None and fetch_site not in OWN_FETCH_SITES:
        return "a request from another origin (Sec-Fetch-Site)"
    return None
