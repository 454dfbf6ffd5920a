"""Who calls the trigger endpoint, and may they: a TokenReview, then a SubjectAccessReview.

No shared secret: the caller sends a Kubernetes bearer token (a ServiceAccount's, or any token
the API server accepts), and a firing is allowed when that identity may `create` `jobflows`
(group flow.volcano.sh) in the trigger's namespace, since a firing creates one. Both answers are
kept for `CACHE_SECONDS` (by the token's SHA-256, never the token; by the identity and namespace),
at most `CACHE_ENTRIES` each, so a caller posting in a loop costs the API server two requests per
`CACHE_SECONDS`, and a flood of bad tokens costs what the trigger client's own QPS budget allows.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jobflow_controller.apis.constants import FLOW_GROUP
from jobflow_controller.kube import resources
from jobflow_controller.kube.clientset import Clientset

CACHE_SECONDS: Final = 10.0
CACHE_ENTRIES: Final = 1024
#: The longest bearer token looked at (a ServiceAccount token is about 1 KiB); longer: 401.
MAX_TOKEN_BYTES: Final = 8192


@dataclass(frozen=True)
class Caller:
    username: str
    uid: str
    groups: tuple[str, ...]
    extra: tuple[tuple[str, tuple[str, ...]], ...]


def bearer_token(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_BYTES or any(c.isspace() for c in token):
        return None
    return token


def caller_of(status: Mapping[str, Any]) -> Caller | None:
    """The identity of an authenticated TokenReview's status, None if not authenticated."""
    if status.get("authenticated") is not True:
        return None
    user = status.get("user") if isinstance(status.get("user"), Mapping) else {}
    assert isinstance(user, Mapping)
    extra = user.get("extra") if isinstance(user.get("extra"), Mapping) else {}
    assert isinstance(extra, Mapping)
    return Caller(
        str(user.get("username") or ""),
        str(user.get("uid") or ""),
        tuple(str(g) for g in user.get("groups") or []),
        tuple(sorted((str(k), tuple(str(x) for x in v or [])) for k, v in extra.items())),
    )


def access_review(caller: Caller, namespace: str) -> dict[str, Any]:
    """The SubjectAccessReview: may `caller` create jobflows in `namespace`?"""
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": caller.username,
            "uid": caller.uid,
            "groups": list(caller.groups),
            "extra": {k: list(v) for k, v in caller.extra},
            "resourceAttributes": {
                "namespace": namespace,
                "verb": "create",
                "group": FLOW_GROUP,
                "resource": "jobflows",
            },
        },
    }


def _status(answer: Mapping[str, Any]) -> Mapping[str, Any]:
    status = answer.get("status")
    return status if isinstance(status, Mapping) else {}


class _TTLCache:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._entries: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[bool, object]:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit[0] < self._clock():
                return False, None
            return True, hit[1]

    def put(self, key: Hashable, value: object) -> None:
        with self._lock:
            self._entries[key] = (self._clock() + CACHE_SECONDS, value)
            self._entries.move_to_end(key)
            while len(self._entries) > CACHE_ENTRIES:
                self._entries.popitem(last=False)


class Authenticator:
    """TokenReview and SubjectAccessReview through `clientset` (the trigger endpoint's own client)."""

    def __init__(self, clientset: Clientset, clock: Callable[[], float] = time.monotonic) -> None:
        self.clientset = clientset
        self._tokens = _TTLCache(clock)
        self._access = _TTLCache(clock)

    def authenticate(self, token: str) -> Caller | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        hit, cached = self._tokens.get(key)
        if hit:
            return cached if isinstance(cached, Caller) else None
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        answer = self.clientset.resource(resources.TOKEN_REVIEWS).create(review)
        caller = caller_of(_status(answer))
        self._tokens.put(key, caller)
        return caller

    def allowed(self, caller: Caller, namespace: str) -> bool:
        key = (caller, namespace)
        hit, cached = self._access.get(key)
        if hit:
            return cached is True
        answer = self.clientset.resource(resources.SUBJECT_ACCESS_REVIEWS).create(access_review(caller, namespace))
        allowed = _status(answer).get("allowed") is True
        self._access.put(key, allowed)
        return allowed
