"""Typed pydantic (v2) models of the project's kinds, generated from manifests/crds/.

`JobFlowModel`, `JobTemplateModel` (its spec is the Volcano JobSpec), `CronJobFlowModel` and
`JobFlowTemplateModel` are the CRDs' root models; the modules `_jobflow`, `_jobtemplate`,
`_cronjobflow` and `_jobflowtemplate` hold every nested model.
Do not edit them: `make sdk-models` regenerates them (hack/gen_sdk_models.py), and a unit test fails
when they differ from what the current CRDs generate. Unknown fields are forbidden, as the API
server's structural schema prunes or refuses them. Needs the `sdk` extra (pydantic).
"""

from jobflow_sdk.models._cronjobflow import CronJobFlow as CronJobFlowModel
from jobflow_sdk.models._jobflow import JobFlow as JobFlowModel
from jobflow_sdk.models._jobflowtemplate import JobFlowTemplate as JobFlowTemplateModel
from jobflow_sdk.models._jobtemplate import JobTemplate as JobTemplateModel

__all__ = ["CronJobFlowModel", "JobFlowModel", "JobFlowTemplateModel", "JobTemplateModel"]
