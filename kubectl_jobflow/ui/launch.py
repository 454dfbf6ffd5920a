"""Opening the browser without putting the token in its command line (issue 33), as Jupyter does.

`webbrowser.open(url)` runs the browser with the URL in its argv, which every user of the machine
can read in /proc/<pid>/cmdline. Instead the URL goes into an HTML file that only the user can read
(mode 0600, in a private directory made by `tempfile.mkdtemp`, mode 0700), and the browser is given
that file's `file://` path: the file sends it on to the URL (a meta refresh, and a link in case
refreshes are off). The directory is removed when the UI stops.
"""

from __future__ import annotations

import html
import os
import shutil
import tempfile
import webbrowser
from collections.abc import Callable
from pathlib import Path

REDIRECT_FILE = "open-jobflow-ui.html"


def redirect_page(url: str) -> str:
    """The HTML that sends the browser to `url` at once."""
    target = html.escape(url, quote=True)
    return (
        '<!doctype html>\n<html><head><meta charset="utf-8">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f'<meta http-equiv="refresh" content="0;url={target}">\n'
        "<title>kubectl jobflow ui</title></head>\n"
        f'<body><p>Opening the JobFlow UI: <a href="{target}">continue</a>.</p></body></html>\n'
    )


class RedirectFile:
    """The 0600 file that opens the UI, in a private temporary directory; `remove()` deletes both."""

    def __init__(self, url: str, parent: str | None = None) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="kubectl-jobflow-ui-", dir=parent))
        self.path = self.directory / REDIRECT_FILE
        # O_EXCL: never write through a file or link someone else put there first.
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(redirect_page(url))

    @property
    def uri(self) -> str:
        return self.path.as_uri()

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def open_browser(url: str, opener: Callable[[str], object] = webbrowser.open) -> RedirectFile:
    """Open the browser on a redirect file to `url`; the caller removes it when the UI stops."""
    redirect = RedirectFile(url)
    opener(redirect.uri)
    return redirect
