"""The API resources the project talks to, and how their URLs are built."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from jobflow_controller.apis import constants


@dataclass(frozen=True)
class Resource:
    """A group/version/resource with its kind, enough to build every URL for it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`jobflows.flow.volcano.sh`, the form API errors name a resource by."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            root += f"/namespaces/{quote(namespace, safe='')}"
        root += f"/{self.plural}"
        if name:
            root += f"/{quote(name, safe='')}"
            if subresource:
                root += f"/{subresource}"
        return root


JOB_FLOWS = Resource(constants.FLOW_GROUP, constants.VERSION, "jobflows", constants.JOB_FLOW_KIND)
JOB_TEMPLATES = Resource(constants.FLOW_GROUP, constants.VERSION, "jobtemplates", constants.JOB_TEMPLATE_KIND)
#: Ours (docs/cron.md): JobFlows on a schedule.
CRON_JOB_FLOWS = Resource(constants.FLOW_GROUP, constants.VERSION, "cronjobflows", constants.CRON_JOB_FLOW_KIND)
#: Ours (docs/templates.md): reusable JobFlow specs with params, run by reference.
JOB_FLOW_TEMPLATES = Resource(
    constants.FLOW_GROUP, constants.VERSION, "jobflowtemplates", constants.JOB_FLOW_TEMPLATE_KIND
)
JOBS = Resource(constants.BATCH_GROUP, constants.VERSION, "jobs", constants.JOB_KIND)
#: Volcano's Commands: the JobFlow controller creates TerminateJob ones (docs/lifecycle.md), nothing else.
COMMANDS = Resource(constants.BUS_GROUP, constants.VERSION, "commands", constants.COMMAND_KIND)
EVENTS = Resource("", "v1", "events", "Event")
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
#: Read only for `dependsOn.probe` HTTP and TCP checks (docs/probe.md), through a Pod informer.
PODS = Resource("", "v1", "pods", "Pod")
#: Ours (docs/triggers.md): JobFlows started by an event.
JOB_FLOW_TRIGGERS = Resource(
    constants.FLOW_GROUP, constants.VERSION, "jobflowtriggers", constants.JOB_FLOW_TRIGGER_KIND
)
#: Created by the trigger endpoint: who a caller's bearer token is, and whether it may create JobFlows.
TOKEN_REVIEWS = Resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", namespaced=False)
SUBJECT_ACCESS_REVIEWS = Resource(
    "authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", namespaced=False
)
