"""API resources only the local tooling (the e2e tests, the benchmarks) writes; the controllers never do.

The controllers' own resources are in ``jobflow_controller.kube.resources``; keeping these apart
keeps that table exactly what the image talks to.
"""

from __future__ import annotations

from jobflow_controller.kube.resources import Resource

#: Created and deleted around each e2e test and benchmark, labelled for the webhook's selector.
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
