"""The CEL rules on ``spec.flows`` and the bounds their cost needs: the Component ``manifests/crd-validation/``.

Beyond upstream, and only in that optional Component, the JobFlow CRD gets rules so that an API
server rejects duplicate names, undefined targets and self-dependencies even without the webhook
(longer cycles need the webhook or the controller), and, for the failure-aware fields, a rule
without targets, a probe with another rule than AllCompleted, and repeated finally names. The
comment below says why the bounds are what they are. The ``maxItems`` the estimates rest on,
``MAX_FLOWS``, ``MAX_TARGETS`` and ``MAX_FINALLY``, are in the base CRD itself (``crdgen.flow``,
from ``jobflow_controller.validation.limits``): the Component adds only the rules and the name bounds.
"""

from __future__ import annotations

from typing import Final

from crdgen.flow import FINALLY_POINTER, FLOWS_POINTER, SPEC_POINTER, TARGETS_POINTER
from crdgen.lifecycle import transition_rule_patch
from crdgen.params import params_rules_patch
from crdgen.schema import JSONDict
from crdgen.templates import template_ref_rules_patch
from jobflow_controller.validation.limits import MAX_FINALLY, MAX_FLOWS, MAX_TARGETS

__all__ = [
    "FINALLY_NAMES_UNIQUE_MESSAGE",
    "FINALLY_NAMES_UNIQUE_RULE",
    "FINALLY_NAME_MESSAGE",
    "FINALLY_NAME_RULE",
    "FINALLY_NOT_A_FLOW_MESSAGE",
    "FINALLY_NOT_A_FLOW_RULE",
    "FLOW_NAMES_UNIQUE_MESSAGE",
    "FLOW_NAMES_UNIQUE_RULE",
    "FLOW_NO_SELF_DEPENDENCY_MESSAGE",
    "FLOW_NO_SELF_DEPENDENCY_RULE",
    "FLOW_TARGETS_DEFINED_MESSAGE",
    "FLOW_TARGETS_DEFINED_RULE",
    "MAX_FINALLY",
    "MAX_FLOWS",
    "MAX_FLOW_NAME_LENGTH",
    "MAX_TARGETS",
    "PROBE_NEEDS_ALL_COMPLETED_MESSAGE",
    "PROBE_NEEDS_ALL_COMPLETED_RULE",
    "RULE_NEEDS_TARGETS_MESSAGE",
    "RULE_NEEDS_TARGETS_RULE",
    "failure_aware_rules_patch",
    "validation_patch",
]

# --------------------------------------------------------------------------------------------
# CEL rules on spec.flows, and the bounds their cost needs (the Component manifests/crd-validation/).
#
# Budgets (k8s.io/apiextensions-apiserver and k8s.io/apiserver v0.37.2): when a CRD is created or
# updated the API server estimates every x-kubernetes-validations rule's worst-case cost from the
# maxItems/maxLength bounds of what it reads, and refuses the CRD if one rule (times the number of
# times it can run) exceeds 10,000,000 (StaticEstimatedCostLimit) or all rules together exceed
# 100,000,000 (StaticEstimatedCRDCostLimit). At run time one evaluation may not cost more than
# 1,000,000 (PerCallLimit) and all rules for one object not more than 10,000,000
# (RuntimeCELCostBudget); a valid object over those limits would be refused. So the bounds are
# chosen so that every rule's *estimate* is under the 1,000,000 per-call limit: whatever fits the
# schema can always be evaluated.
#
# Uniqueness is quadratic whatever the spelling (CEL cannot build a set from a list without
# failing on the very duplicates to be reported): `distinct()` is estimated (and charged) at
# 2 * n^2, against about 108 * n^2 for `self.all(f, self.exists_one(g, g.name == f.name))` with
# 253-character names. It fixes maxItems of flows: 2 * 500^2 = 500,000, leaving room for the rest.
#
# The targets rule builds a name -> index map once (`transformMapEntry`, bound to `names` by
# iterating over a one-element list, since the Kubernetes CEL environment has no cel.bind) and then
# costs about 6 per target (a map lookup is O(1) in the estimate), instead of flows x targets x
# flows for `self.exists(g, g.name == t)` per target (10,900,512,002 for 1000 flows of 100
# targets). transformMapEntry fails on a duplicate key, so the rule first checks uniqueness and
# leaves duplicates to the uniqueness rule; that check is most of its cost.
#
# Estimates with MAX_FLOWS = 500, MAX_TARGETS = 100 (the maxItems of the base CRD, from
# jobflow_controller.validation.limits), MAX_FLOW_NAME_LENGTH = 253, from the API server's own
# estimator (apiextensions-apiserver v0.37.2, compiled against this schema); a change of the caps
# must redo them (tests/unit/manifests/test_manifests_caps.py pins the numbers named here):
#   names unique                507,027  (once)
#   targets defined             830,575  (once)
#   no self-dependency              111  (per flow, 55,500 for 500 flows)
#   and with the failure-aware rules (issue 22; MAX_FINALLY = 100):
#   rule needs targets                7  (per flow, 3,500)
#   probe only with AllCompleted      8  (per flow, 4,000)
#   finally names unique         21,427  (once)
#   finally names not a flow's   28,983  (once)
#   total                     1,451,012  (limits: 1,000,000 per rule, 10,000,000 per object)
# (600 flows would put the targets rule at 1,116,675, and 200 targets per flow at 1,130,575.)
# The actual cost of a worst-case object (500 flows with 253-character names, 100 targets each)
# measured with the same validator is 1,441,831 for all three rules together.
#
# The rules need CEL libraries of Kubernetes 1.34 (lists `distinct`, two-variable comprehensions
# from 1.32); an API server admits them from 1.35 on (new expressions may use libraries of the
# previous minor). Hence a Component, off by default: manifests/crds/ is upstream's schema with only
# additive fields and maxItems bounds (no CEL), which any server takes.
#
# Updates ratchet: none of the rules on spec.flows reads oldSelf, so the API server's CRD validation ratcheting
# (KEP-4008; GA and always on from 1.33, so on every server that admits the rules) lets an UPDATE
# through whatever these rules and bounds say as long as spec.flows is unchanged. spec.flows is the
# nearest correlatable node (flows is an atomic list, whose items are not correlated), so an error
# in a flow (the per-flow rule, a bound on a name) is ratcheted when the whole list is unchanged:
# a metadata-only edit of a JobFlow stored before the rules were installed is never refused, an
# UPDATE that changes spec.flows is checked in full -- the webhook's own ratchet. The one rule that
# reads oldSelf, spec.shutdown's transition (crdgen.lifecycle), is a transition rule: it runs on
# every UPDATE of a spec, and passes unless spec.shutdown is changed back. Its cost is constant.
#
# The name bound is 253, a DNS-1123 subdomain, the longest name a JobTemplate (which a flow
# names) can have; the validation package refuses, with a message naming the value, names whose
# Job name or label values would be too long.
# --------------------------------------------------------------------------------------------
MAX_FLOW_NAME_LENGTH: Final = 253

#: On spec.flows: no two flows share a name.
FLOW_NAMES_UNIQUE_RULE: Final = "self.map(f, f.name).distinct().size() == self.size()"
#: On spec.flows: every target names a flow.
FLOW_TARGETS_DEFINED_RULE: Final = (
    "self.map(f, f.name).distinct().size() != self.size()"
    " || [self.transformMapEntry(i, f, {f.name: i})].all(names, self.all(f,"
    " !has(f.dependsOn) || !has(f.dependsOn.targets) || f.dependsOn.targets.all(t, t in names)))"
)
#: On each flow: it does not wait for itself.
FLOW_NO_SELF_DEPENDENCY_RULE: Final = (
    "!has(self.dependsOn) || !has(self.dependsOn.targets) || !(self.name in self.dependsOn.targets)"
)
#: The messages: upstream's webhook messages (as its ValidatingAdmissionPolicy words them).
FLOW_NAMES_UNIQUE_MESSAGE: Final = "jobflow Flow names must be unique"
FLOW_TARGETS_DEFINED_MESSAGE: Final = "jobflow Flow is not DAG: vertex is not defined"
FLOW_NO_SELF_DEPENDENCY_MESSAGE: Final = "jobflow Flow is not DAG"

# The failure-aware fields (docs/rules.md, issue 22). An unknown rule or policy and a
# continueOnFailure that is not a boolean are the base CRD's enums and type to refuse; the rules
# below are the webhook's other checks that need no more than the object (their messages start as
# the webhook's; the API server names the field, e.g. `spec.flows[1].dependsOn`). Each finally
# name must be unique and repeat no flow name: the second rule builds a name -> index map of the
# finally entries (as the targets rule does of the flows) once they are known to be unique, so each
# flow costs a map lookup, instead of finally x flows string comparisons.

#: On each flow's dependsOn: a rule needs targets (it decides over their outcomes).
RULE_NEEDS_TARGETS_RULE: Final = "!has(self.rule) || (has(self.targets) && self.targets.size() > 0)"
RULE_NEEDS_TARGETS_MESSAGE: Final = "jobflow Flow dependsOn.rule needs dependsOn.targets"
#: On each flow's dependsOn: a probe only with the rule AllCompleted.
PROBE_NEEDS_ALL_COMPLETED_RULE: Final = "!has(self.probe) || !has(self.rule) || self.rule == 'AllCompleted'"
PROBE_NEEDS_ALL_COMPLETED_MESSAGE: Final = "jobflow Flow dependsOn.probe is only allowed with the rule AllCompleted"
#: On spec.finally: no two entries share a name.
FINALLY_NAMES_UNIQUE_RULE: Final = FLOW_NAMES_UNIQUE_RULE
FINALLY_NAMES_UNIQUE_MESSAGE: Final = "jobflow Finally names must be unique"
#: On spec: no finally name is a flow's (both would be the Job <jobflow>-<name>).
FINALLY_NOT_A_FLOW_RULE: Final = (
    "!has(self.finally) || !has(self.flows)"
    " || self.finally.map(f, f.name).distinct().size() != self.finally.size()"
    " || [self.finally.transformMapEntry(i, f, {f.name: i})].all(names, self.flows.all(g, !(g.name in names)))"
)
FINALLY_NOT_A_FLOW_MESSAGE: Final = "jobflow Finally names must not repeat a flow name"
#: On each finally entry's name: the webhook's JobTemplate-name rule (`validation.names`), a DNS-1123
#: subdomain (its 253 characters are the base CRD's maxLength). The rules needing the JobFlow's name or
#: namespace (the Job name, the label value) stay the webhook's: a rule here cannot read them.
FINALLY_NAME_RULE: Final = "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')"
FINALLY_NAME_MESSAGE: Final = (
    "jobflow Finally name must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.',"
    " with every '.'-separated part starting and ending with a letter or digit"
)


def validation_patch() -> list[JSONDict]:
    """The JSON patch ``manifests/crd-validation/`` applies to ``jobflows.flow.volcano.sh``: only ``add``s.

    The rules on ``spec.flows`` (unique names, defined targets) and on each flow (no
    self-dependency), and the bound their cost estimate needs beyond the base CRD's ``maxItems`` of
    flows and of targets: ``maxLength`` of flow names and targets; and the transition rule of
    ``spec.shutdown`` (``crdgen.lifecycle``), the one rule reading ``oldSelf``.
    """
    flows = FLOWS_POINTER
    flow = f"{flows}/items"
    targets = TARGETS_POINTER
    return [
        {
            "op": "add",
            "path": f"{flows}/x-kubernetes-validations",
            "value": [
                {"message": FLOW_NAMES_UNIQUE_MESSAGE, "rule": FLOW_NAMES_UNIQUE_RULE},
                {"message": FLOW_TARGETS_DEFINED_MESSAGE, "rule": FLOW_TARGETS_DEFINED_RULE},
            ],
        },
        {
            "op": "add",
            "path": f"{flow}/x-kubernetes-validations",
            "value": [{"message": FLOW_NO_SELF_DEPENDENCY_MESSAGE, "rule": FLOW_NO_SELF_DEPENDENCY_RULE}],
        },
        {"op": "add", "path": f"{flow}/properties/name/maxLength", "value": MAX_FLOW_NAME_LENGTH},
        {"op": "add", "path": f"{targets}/items/maxLength", "value": MAX_FLOW_NAME_LENGTH},
        *_joined([*failure_aware_rules_patch(), *transition_rule_patch(), *template_ref_rules_patch()]),
        *params_rules_patch(),
    ]


def _joined(patch: list[JSONDict]) -> list[JSONDict]:
    """One ``add`` per path: the lists of rules that two parts add to the same object are joined."""
    out: list[JSONDict] = []
    at: dict[str, JSONDict] = {}
    for operation in patch:
        same = at.get(operation["path"])
        if same is not None and isinstance(same["value"], list):
            same["value"] = [*same["value"], *operation["value"]]
            continue
        operation = dict(operation)
        at[operation["path"]] = operation
        out.append(operation)
    return out


def failure_aware_rules_patch() -> list[JSONDict]:
    """The rules on the failure-aware fields (issue 22); the ``maxLength`` of finally names they need is the
    base CRD's (``crdgen.flow.finally_schema``: the field is ours, so bounded in the default install too).

    On each flow's ``dependsOn`` (a rule needs targets; a probe only with ``AllCompleted``), on
    ``spec.finally`` (unique names), on each finally name (a DNS-1123 subdomain, the webhook's rule
    for a JobTemplate's name) and on ``spec`` (no finally name is a flow's), the one rule reading
    two fields.
    """
    return [
        {
            "op": "add",
            "path": f"{FLOWS_POINTER}/items/properties/dependsOn/x-kubernetes-validations",
            "value": [
                {"message": RULE_NEEDS_TARGETS_MESSAGE, "rule": RULE_NEEDS_TARGETS_RULE},
                {"message": PROBE_NEEDS_ALL_COMPLETED_MESSAGE, "rule": PROBE_NEEDS_ALL_COMPLETED_RULE},
            ],
        },
        {
            "op": "add",
            "path": f"{FINALLY_POINTER}/x-kubernetes-validations",
            "value": [{"message": FINALLY_NAMES_UNIQUE_MESSAGE, "rule": FINALLY_NAMES_UNIQUE_RULE}],
        },
        {
            "op": "add",
            "path": f"{FINALLY_POINTER}/items/properties/name/x-kubernetes-validations",
            "value": [{"message": FINALLY_NAME_MESSAGE, "rule": FINALLY_NAME_RULE}],
        },
        {
            "op": "add",
            "path": f"{SPEC_POINTER}/x-kubernetes-validations",
            "value": [{"message": FINALLY_NOT_A_FLOW_MESSAGE, "rule": FINALLY_NOT_A_FLOW_RULE}],
        },
    ]
