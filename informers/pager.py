"""Paginated LIST (client-go ``tools/pager``).

Pages are fetched with ``limit``/``continue`` and concatenated; the list's resourceVersion is the
first page's. Continuation requests send no resourceVersion (the token pins the snapshot). If a
continue token expires mid-way (410), the pager falls back to one unpaginated list at the
originally requested resourceVersion, so a large list still completes.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from informers.errors import is_expired
from informers.listwatch import ListOptions, ListResult

DEFAULT_PAGE_SIZE = 500

PageFunc = Callable[[ListOptions], ListResult]


class ListCancelled(Exception):
    """The pager was asked to stop between two pages; the partial list is thrown away."""


class ListPager:
    """Runs a list page by page through ``page_fn``."""

    def __init__(
        self, page_fn: PageFunc, page_size: int = DEFAULT_PAGE_SIZE, *, full_list_if_expired: bool = True
    ) -> None:
        self.page_fn = page_fn
        self.page_size = page_size
        self.full_list_if_expired = full_list_if_expired

    def list(self, options: ListOptions, stop: threading.Event | None = None) -> tuple[ListResult, bool]:
        """The whole list, and whether it actually took more than one page.

        ``options.limit`` wins over the pager's page size; a page size of 0 means one request with
        no limit. When ``stop`` is set the pager sends no further page and raises ``ListCancelled``
        (client-go checks its context between pages): a stopping process must not spend minutes
        on the rest of a 10,000-object list it will never use.
        """
        if not options.limit:
            options = dataclasses.replace(options, limit=self.page_size or None)
        requested_rv = options.resource_version
        requested_rv_match = options.resource_version_match
        items: list[dict[str, Any]] | None = None
        list_rv = ""
        paginated = False
        while True:
            if stop is not None and stop.is_set() and options.continue_token:
                raise ListCancelled("list stopped between pages")
            try:
                page = self.page_fn(options)
            except Exception as err:
                if not is_expired(err) or not self.full_list_if_expired or not options.continue_token:
                    raise
                # The continue token expired while paginating: fall back to one full list.
                full = dataclasses.replace(
                    options,
                    limit=None,
                    continue_token=None,
                    resource_version=requested_rv,
                    resource_version_match=requested_rv_match,
                )
                return self.page_fn(full), paginated
            if not page.continue_token and items is None:
                return page, paginated  # everything fit in the first page
            if items is None:
                items = []
                list_rv = page.resource_version
            items.extend(page.items)
            if not page.continue_token:
                return ListResult(items=items, resource_version=list_rv, continue_token=None), paginated
            options = dataclasses.replace(
                options,
                continue_token=page.continue_token,
                resource_version="",
                resource_version_match=None,
            )
            paginated = True
