"""The webhook's serving certificate and key, re-read when either file changes.

A renewed Secret mounted into the pod is swapped in place by the kubelet, so renewal needs no
restart. A pair that does not load, such as a certificate written before its key, keeps the previous
one until both are in place.
"""

from __future__ import annotations

import os
import ssl
import threading

import structlog

__all__ = ["CertificateFiles"]

log = structlog.get_logger("jobflow_controller.webhook")


class CertificateFiles:
    """An ``SSLContext`` for a certificate and key on disk, rebuilt when either file changes."""

    def __init__(self, cert_file: str, key_file: str) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self._lock = threading.Lock()
        self._stamp = self._read_stamp()
        self._context = self._load()  # fails loudly at start-up: no server without a certificate

    def context(self) -> ssl.SSLContext:
        with self._lock:
            try:
                stamp = self._read_stamp()
            except OSError as err:
                log.warning("cannot stat the webhook certificate; keeping the loaded one", error=str(err))
                return self._context
            if stamp != self._stamp:
                try:
                    self._context = self._load()
                except OSError as err:  # ssl.SSLError is one
                    log.warning("cannot load the changed webhook certificate; keeping the loaded one", error=str(err))
                else:
                    log.info("reloaded the webhook certificate", cert_file=self.cert_file)
                # Once tried, a broken pair is not re-read on every connection; the next change is.
                self._stamp = stamp
            return self._context

    def _read_stamp(self) -> tuple[tuple[int, int, int], ...]:
        stats = (os.stat(self.cert_file), os.stat(self.key_file))
        return tuple((s.st_ino, s.st_mtime_ns, s.st_size) for s in stats)

    def _load(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["http/1.1"])
        context.load_cert_chain(self.cert_file, self.key_file)
        return context
