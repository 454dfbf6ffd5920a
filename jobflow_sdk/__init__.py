"""jobflow_sdk: JobFlow pipelines written, checked, submitted, watched and drawn from Python.

    from jobflow_sdk import JobFlow, JobTemplate, CronJobFlow

A client library like the kubectl plugin: it imports the controller's API helpers, validation rules
and client layer (and the web view's layout), and the controller never imports it. The typed
models (`jobflow_sdk.models`, generated from manifests/crds/) and the schema checks need the `sdk`
extra (pydantic); building and YAML do not. See docs/sdk.md.
"""

from jobflow_sdk.cron import CronJobFlow
from jobflow_sdk.errors import (
    InvalidJobFlowError,
    JobFlowDeletedError,
    JobFlowFailedError,
    JobFlowSDKError,
    NotAvailableError,
    SchemaError,
    WaitTimeoutError,
)
from jobflow_sdk.flow import Flow
from jobflow_sdk.jobflow import JobFlow
from jobflow_sdk.jobflowtemplate import JobFlowTemplate, submit_from_template
from jobflow_sdk.run import Connection, connect
from jobflow_sdk.template import SIMULATOR_PHASES, JobTemplate

__all__ = [
    "SIMULATOR_PHASES",
    "Connection",
    "CronJobFlow",
    "Flow",
    "InvalidJobFlowError",
    "JobFlow",
    "JobFlowDeletedError",
    "JobFlowFailedError",
    "JobFlowSDKError",
    "JobFlowTemplate",
    "JobTemplate",
    "NotAvailableError",
    "SchemaError",
    "WaitTimeoutError",
    "connect",
    "submit_from_template",
]
