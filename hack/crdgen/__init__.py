"""The CRD generator: the four CustomResourceDefinitions (JobFlow, JobTemplate, Volcano Job and Command) as dicts.

``hack/gen_crds.py`` writes them out: the JobFlow and JobTemplate CRDs to ``manifests/crds/`` (what
``kubectl apply -k manifests/`` installs), Volcano's Job and Command CRDs to ``hack/local-crds/`` (for the local
control plane only: a cluster that runs Volcano has its own, which must not be overwritten), and
the CEL rules as the JSON patch of the optional kustomize Component ``manifests/crd-validation/``.
It lives under ``hack/`` because nothing at run time needs it: the local control plane applies the
written files. It is importable as ``crdgen`` with ``hack/`` on ``sys.path``: ``hack/gen_crds.py``
has it there as the script's own directory, the manifest tests put it there in
``tests/unit/manifests/conftest.py``, and mypy checks it from ``pyproject.toml``'s ``files``.

What upstream's controller-gen output (``config/crd/*/bases``) looks like, and so what this builds:

* no descriptions (upstream generates with ``maxDescLen=0``), keys sorted, the two annotations
  ``controller-gen.kubebuilder.io/version: v0.20.0`` and ``helm.sh/resource-policy: keep``
  (``schema``);
* the Volcano ``JobSpec`` written out field by field (``volcano``);
* the Kubernetes types it embeds (``PodTemplateSpec`` for tasks, ``PersistentVolumeClaimSpec`` for
  volumes) converted from the OpenAPI schemas shipped in ``kubernetes-validate`` into structural
  schemas (``kubernetes``);
* an embedded ``ObjectMeta`` as controller-gen's ``generateEmbeddedObjectMeta`` emits it: only
  ``annotations``, ``finalizers``, ``labels``, ``name`` and ``namespace``.

The result is upstream's CRDs exactly: parsed, ``upstream_jobflow_crd()``, ``jobtemplate_crd()`` and
``job_crd()`` are equal to volcano-sh/volcano's committed
``config/crd/jobflow/bases/flow.volcano.sh_{jobflows,jobtemplates}.yaml`` and
``config/crd/volcano/bases/batch.volcano.sh_jobs.yaml`` (``UPSTREAM_CRD_SHA256`` pins them).

The JobFlow CRD we ship (``jobflow_crd()``) is upstream's plus one additive, optional field,
``spec.flows[].retry``, ``maxItems`` on ``spec.flows`` and each flow's targets, the size caps of
``jobflow_controller.validation.limits``, and the failure-aware fields of docs/rules.md (``flow``).
Every field we add is bounded (``maxLength``, ``maxItems``, ``maxProperties``, ``maximum``, issue 42);
``upstream`` says which fields are upstream's, for the test that checks it.
Beyond upstream, and only in the optional Component, it gets CEL rules on ``spec.flows``, ``spec``
and ``spec.finally`` and the bounds their cost needs (``rules``). ``files`` turns it all into the
exact text of each file.
"""

from crdgen.bus import command_crd
from crdgen.cron import cron_validation_patch, cronjobflow_crd
from crdgen.files import (
    COMMAND_CRD_FILE,
    CRD_FILES,
    CRON_VALIDATION_PATCH_FILE,
    JOB_CRD_FILE,
    TEMPLATE_VALIDATION_PATCH_FILE,
    UPSTREAM_CRD_SHA256,
    VALIDATION_PATCH_FILE,
    all_crds,
    canonical_sha256,
    cron_crd,
    generated_files,
    jobflow_crd,
    render_crd,
    render_validation_patch,
    template_crd,
)
from crdgen.flow import (
    DEFAULT_RETRY_BACKOFF,
    FAILURE_AWARE_ADDITIONS,
    FLOWS_MAX_ITEMS_POINTER,
    OUR_ADDITIONS,
    RETRY_FIELD_POINTER,
    TARGETS_MAX_ITEMS_POINTER,
    cap_patch,
    failure_aware_patch,
    jobtemplate_crd,
    our_additions_patch,
    retry_field_patch,
    retry_schema,
    upstream_jobflow_crd,
    without_our_additions,
)
from crdgen.jsonpatch import apply_patch
from crdgen.kubernetes import KUBERNETES_SCHEMA_VERSION
from crdgen.lifecycle import (
    LIFECYCLE_FIELDS,
    LIFECYCLE_POINTERS,
    SHUTDOWN_TRANSITION_MESSAGE,
    SHUTDOWN_TRANSITION_RULE,
    lifecycle_patch,
)
from crdgen.params import (
    MATRIX_PRODUCT_MESSAGE,
    MATRIX_PRODUCT_MESSAGE_EXPRESSION,
    MATRIX_PRODUCT_RULE,
    NAME_SHAPE_RULE,
    NAMES_UNIQUE_RULE,
    PARAMS_POINTERS,
    WHEN_ONE_OF_MESSAGE,
    WHEN_ONE_OF_RULE,
    params_patch,
    params_rules_patch,
)
from crdgen.results import RESULTS_POINTERS, results_patch
from crdgen.rules import (
    FINALLY_NAME_MESSAGE,
    FINALLY_NAME_RULE,
    FINALLY_NAMES_UNIQUE_RULE,
    FINALLY_NOT_A_FLOW_RULE,
    FLOW_NAMES_UNIQUE_RULE,
    FLOW_NO_SELF_DEPENDENCY_RULE,
    FLOW_TARGETS_DEFINED_RULE,
    MAX_FINALLY,
    MAX_FLOW_NAME_LENGTH,
    MAX_FLOWS,
    MAX_TARGETS,
    PROBE_NEEDS_ALL_COMPLETED_RULE,
    RULE_NEEDS_TARGETS_RULE,
    validation_patch,
)
from crdgen.schema import CONTROLLER_GEN_VERSION
from crdgen.templates import (
    REF_EXCLUSIVE_MESSAGE,
    REF_EXCLUSIVE_RULE,
    TEMPLATE_RUN_POINTERS,
    jobflowtemplate_crd,
    template_validation_patch,
)
from crdgen.trigger import jobflowtrigger_crd
from crdgen.volcano import job_crd, job_spec_schema

__all__ = [
    "COMMAND_CRD_FILE",
    "CONTROLLER_GEN_VERSION",
    "CRD_FILES",
    "CRON_VALIDATION_PATCH_FILE",
    "DEFAULT_RETRY_BACKOFF",
    "FAILURE_AWARE_ADDITIONS",
    "FINALLY_NAMES_UNIQUE_RULE",
    "FINALLY_NAME_MESSAGE",
    "FINALLY_NAME_RULE",
    "FINALLY_NOT_A_FLOW_RULE",
    "FLOWS_MAX_ITEMS_POINTER",
    "FLOW_NAMES_UNIQUE_RULE",
    "FLOW_NO_SELF_DEPENDENCY_RULE",
    "FLOW_TARGETS_DEFINED_RULE",
    "JOB_CRD_FILE",
    "KUBERNETES_SCHEMA_VERSION",
    "LIFECYCLE_FIELDS",
    "LIFECYCLE_POINTERS",
    "MATRIX_PRODUCT_MESSAGE",
    "MATRIX_PRODUCT_MESSAGE_EXPRESSION",
    "MATRIX_PRODUCT_RULE",
    "MAX_FINALLY",
    "MAX_FLOWS",
    "MAX_FLOW_NAME_LENGTH",
    "MAX_TARGETS",
    "NAMES_UNIQUE_RULE",
    "NAME_SHAPE_RULE",
    "OUR_ADDITIONS",
    "PARAMS_POINTERS",
    "PROBE_NEEDS_ALL_COMPLETED_RULE",
    "REF_EXCLUSIVE_MESSAGE",
    "REF_EXCLUSIVE_RULE",
    "RESULTS_POINTERS",
    "RETRY_FIELD_POINTER",
    "RULE_NEEDS_TARGETS_RULE",
    "SHUTDOWN_TRANSITION_MESSAGE",
    "SHUTDOWN_TRANSITION_RULE",
    "TARGETS_MAX_ITEMS_POINTER",
    "TEMPLATE_RUN_POINTERS",
    "TEMPLATE_VALIDATION_PATCH_FILE",
    "UPSTREAM_CRD_SHA256",
    "VALIDATION_PATCH_FILE",
    "WHEN_ONE_OF_MESSAGE",
    "WHEN_ONE_OF_RULE",
    "all_crds",
    "apply_patch",
    "canonical_sha256",
    "cap_patch",
    "command_crd",
    "cron_crd",
    "cron_validation_patch",
    "cronjobflow_crd",
    "failure_aware_patch",
    "generated_files",
    "job_crd",
    "job_spec_schema",
    "jobflow_crd",
    "jobflowtemplate_crd",
    "jobflowtrigger_crd",
    "jobtemplate_crd",
    "lifecycle_patch",
    "our_additions_patch",
    "params_patch",
    "params_rules_patch",
    "render_crd",
    "render_validation_patch",
    "results_patch",
    "retry_field_patch",
    "retry_schema",
    "template_crd",
    "template_validation_patch",
    "upstream_jobflow_crd",
    "validation_patch",
    "without_our_additions",
]
