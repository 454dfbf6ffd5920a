"""Zero cost for a JobFlow without results (docs/results.md): a whole run through the controller (a chain,
a matrix flow, params, a `when`, a Failed Job) sends no request about pods and plans with the policy it
always had; the same JobFlow declaring results sends exactly one pod LIST per Job that ended, and nothing
else more. Requests are counted at the fake API (`api.actions`)."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

from jobflow_fakes import job_flow, job_template, new_fake_controller
from test_jobflow_planner import UID
from test_jobflow_results import CountingClientset, pod

from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.kube.resources import JOB_FLOWS, JOBS, PODS

MATRIX = {"params": [{"name": "x", "values": ["1", "2"]}]}
WHEN = [{"input": "$(params.mode)", "operator": "in", "values": ["full"]}]
PLAIN = [
    {"name": "a"},
    {"name": "b", "dependsOn": {"targets": ["a"]}, "matrix": MATRIX},
    {"name": "c", "dependsOn": {"targets": ["b"]}, "when": WHEN},
    {"name": "d", "dependsOn": {"targets": ["b"]}},
]
#: The Job that fails (its flow's dependents are never created under the default rule).
FAILS = "jf-d"


def declaring(flows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**f, "results": {"names": ["acc"]}} for f in flows]


JOB_NAMES = ["jf-a", "jf-b-0", "jf-b-1", "jf-c", "jf-d"]


def reporting_pods(clientset: CountingClientset) -> None:
    """Each Job's pod 0 of task `main`, reporting `acc`, controlled by the Job (uid `uid-<job>`)."""
    for name in JOB_NAMES:
        found = pod('{"acc": "0.9"}', uid=f"uid-{name}")
        found["metadata"].update(name=f"{name}-main-0", namespace="default")
        clientset.api.objects[(PODS.plural, "default", f"{name}-main-0")] = found


def run(flows: list[dict[str, Any]], rounds: int = 8, pods: bool = False) -> Counter[tuple[str, str]]:
    """Sync until nothing changes, each round ending every Job created (Completed, FAILS Failed), the
    informer showing the last status written; the requests by (resource, verb)."""
    clientset = CountingClientset()
    if pods:
        reporting_pods(clientset)
    controller, _, _ = new_fake_controller(clientset=clientset)
    obj = job_flow("jf", flows=flows, uid=UID)
    obj["spec"]["params"] = [{"name": "mode", "value": "full"}]
    flow_indexer, job_indexer = controller.job_flow_informer.get_indexer(), controller.job_informer.get_indexer()
    flow_indexer.add(obj)
    for flow in flows:
        task = {"name": "main", "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
        controller.job_template_informer.get_indexer().add(job_template(flow["name"], spec={"tasks": [task]}))
    for _ in range(rounds):
        controller.sync.handle_job_flow(JobFlowController.request_for("default", "jf"))
        stored = clientset.api.objects.get((JOB_FLOWS.plural, "default", "jf"))
        if stored is not None:
            flow_indexer.update(copy.deepcopy(stored))
        for (plural, _ns, name), made in list(clientset.api.objects.items()):
            if plural == JOBS.plural and not job_indexer.get_by_key(f"default/{name}")[1]:
                ended = copy.deepcopy(made)
                ended["metadata"]["uid"] = f"uid-{name}"
                ended["status"] = {"state": {"phase": "Failed" if name == FAILS else "Completed"}}
                job_indexer.add(ended)
    return Counter((a.resource, a.verb) for a in clientset.api.actions)


def test_a_jobflow_without_results_sends_no_request_about_pods_in_a_whole_run() -> None:
    requests = run(PLAIN)
    assert requests[(JOBS.plural, "create")] == 5  # a, b's two, c, d: the run went through
    assert [r for r in requests if r[0] == PODS.plural] == []
    assert set(requests) <= {(JOBS.plural, "create"), (JOB_FLOWS.plural, "update_status")}


def test_the_same_jobflow_declaring_results_adds_one_pod_list_per_ended_job_and_nothing_else() -> None:
    plain, with_results = run(PLAIN), run(declaring(PLAIN), pods=True)
    assert with_results - plain == Counter({(PODS.plural, "list"): len(JOB_NAMES)})
    assert plain - with_results == Counter()


def test_a_declaring_flow_whose_pod_is_gone_is_read_once_and_stops_its_dependents() -> None:
    with_results = run(declaring(PLAIN))
    assert with_results[(PODS.plural, "list")] == 1  # a's pod: gone, so a counts as Failed
    assert with_results[(JOBS.plural, "create")] == 1
