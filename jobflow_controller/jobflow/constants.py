"""Reasons, messages and names the JobFlow controller shows to users (exact upstream strings)."""

from __future__ import annotations

#: `source.component` of every event, as upstream's controller manager sets it.
COMPONENT = "vc-controller-manager"
#: The work queue's name, which labels its `workqueue_*` metrics.
QUEUE_NAME = "jobflow"

EVENT_NORMAL = "Normal"
EVENT_WARNING = "Warning"

#: Normal event after a Job was created from a JobTemplate.
REASON_CREATED = "Created"
MESSAGE_CREATED = "create a job named %s!"
#: The message of the Warning event whose reason is the request's action, when a request is dropped.
MESSAGE_SYNC_FAILED = "%s JobFlow failed for %s"

#: Our addition (no upstream counterpart): a JobFlow whose spec can never finish.
REASON_INVALID = "InvalidJobFlow"

#: Ours (upstream ignores `patch.jobSpec`, docs/patch.md): a flow whose patch cannot apply to its
#: JobTemplate (a patch task the template lacks; or, with the webhook off, a malformed patch). That
#: flow's Job is not created, the other flows go on, nothing is retried: a spec edit of the JobFlow
#: or of the template, or the resync, syncs it again. Arguments: Job, flow, template, the problem.
REASON_INVALID_PATCH = "InvalidPatch"
MESSAGE_INVALID_PATCH = 'Job %s is not created: the patch of flow "%s" does not apply to JobTemplate "%s": %s'

#: Ours, sample-controller's rule: a Job of the right name that this JobFlow does not control is
#: never adopted, counted or modified; the JobFlow says so and the flow waits.
REASON_RESOURCE_EXISTS = "ErrResourceExists"
MESSAGE_RESOURCE_EXISTS = 'Resource "%s" already exists and is not managed by JobFlow'
#: Ours: the API server refused a Job (a ResourceQuota, an admission webhook, validation). Upstream
#: says nothing until --max-requeue-num retries later; this names the cause at once.
REASON_FAILED_CREATE = "FailedCreate"
MESSAGE_FAILED_CREATE = "Error creating job %s: %s"

#: Ours (upstream never retries, docs/retry.md): a flow's Job ended Failed or Terminated and its
#: retry policy (`spec.flows[].retry`, or the `flow.volcano.sh/retry` annotation) has retries
#: left, so it is deleted and created again after the backoff. Arguments: Job, its phase, the
#: backoff (Go duration), the retry number, maxRetries.
REASON_RETRY_JOB = "RetryJob"
MESSAGE_RETRY_JOB = "Job %s ended %s: deleting it to create it again in %s (retry %d of %d)"

#: Ours: a flow's retry policy in force is malformed (stored while the webhook was off). Its Job is
#: never retried (a failure fails the JobFlow, as upstream); the other flows are unaffected.
REASON_INVALID_RETRY = "InvalidRetryPolicy"
MESSAGE_INVALID_RETRY = "No retries for these flows: %s"
#: Ours (upstream ignores `dependsOn.probe`, docs/probe.md): a flow whose probe cannot be judged, so
#: its Job is not created and the flow waits (the other flows go on; nothing is retried until the
#: JobFlow, a target's Job or its JobTemplate changes, or the resync). Two forms: a probe admission
#: would refuse (the webhook was off; arguments: Job, flow, the problems), and a probe naming a task
#: that none of the flow's targets has (arguments: Job, flow, task, the targets).
REASON_INVALID_PROBE = "InvalidProbe"
MESSAGE_INVALID_PROBE = 'Job %s is not created: the probe of flow "%s" is invalid: %s'
MESSAGE_PROBE_TASK_NOT_FOUND = (
    'Job %s is not created: the probe of flow "%s" names task "%s", which none of its targets (%s) has'
)
MESSAGE_PROBE_TARGET_REFUSED = 'Job %s is not created: the probe of flow "%s" does not check pod %s at %s: %s'

#: Ours (docs/params.md, apis/expansion.py): a flow whose `$(VAR)` expansion is over a budget (a
#: string, its Job, the JobFlow's Jobs together, its Job's annotations, a `when` input). Its Job is
#: not created and the flow waits (the other flows go on) until the JobFlow or the template changes.
#: Arguments: Job, flow, the budget exceeded.
REASON_INVALID_PARAMS = "InvalidParams"
MESSAGE_INVALID_PARAMS = 'Job %s is not created: the expansion of flow "%s" is over its budget: %s'

#: Ours (status_writer.py `fit_status`): the status computed is over the size the JobFlow may store; the JobFlow is
#: failed with a status reduced until it fits. Arguments: the size, the limit (bytes), what was dropped.
REASON_STATUS_TOO_LARGE = "StatusTooLarge"
MESSAGE_STATUS_TOO_LARGE = (
    "The status of %d bytes is over the limit of %d bytes: the JobFlow is failed, and its status is written without: %s"
)

#: Ours (docs/rules.md): a flow of a failure-aware JobFlow whose `dependsOn.rule` can no longer be
#: met, so its Job is never created. Normal, once per flow. Arguments: flow, rule, the targets'
#: outcomes ("prep: Failed, lint: none yet").
REASON_SKIPPED = "Skipped"
MESSAGE_SKIPPED = "Flow %s is skipped: its rule %s can no longer be met (%s)"

#: Ours (docs/lifecycle.md): `spec.suspend` seen set (no Job is created until it is unset) and unset.
REASON_SUSPENDED = "Suspended"
MESSAGE_SUSPENDED = "JobFlow suspended: no Job is created until spec.suspend is false; running Jobs go on"
REASON_RESUMED = "Resumed"
MESSAGE_RESUMED = "JobFlow resumed"
#: Ours: how a JobFlow stopped by `spec.shutdown` ended (Normal, on its move to Failed).
REASON_STOPPED = "Stopped"
MESSAGE_STOPPED = "JobFlow stopped by spec.shutdown: Stop; no new flow was started"
REASON_TERMINATED = "Terminated"
MESSAGE_TERMINATED = "JobFlow terminated by spec.shutdown: Terminate; its running Jobs were terminated"
#: Ours (Warning): a flow's Job, or the whole JobFlow, ran past its `activeDeadlineSeconds`.
REASON_DEADLINE_EXCEEDED = "DeadlineExceeded"
MESSAGE_FLOW_DEADLINE = "Job %s of flow %s ran past its activeDeadlineSeconds (%ds): terminating it"
MESSAGE_JOB_FLOW_DEADLINE = "JobFlow ran past its activeDeadlineSeconds (%ds): terminating its Jobs"
MESSAGE_ENDED_DEADLINE = "JobFlow failed: it ran past its activeDeadlineSeconds"
#: Ours (Normal): a re-run asked for with `kubectl jobflow retry` (the flow.volcano.sh/retry-request
#: annotation). Arguments: the flows re-run.
REASON_RETRIED = "Retried"
MESSAGE_RETRIED = "Re-running flows: %s"
MESSAGE_RETRIED_NOTHING = "Nothing to re-run: no flow is Failed or Skipped, or named"

#: Ours (docs/results.md): a Completed Job's pod did not report a declared result (or reported a bad one).
REASON_INVALID_RESULT = "InvalidResult"
MESSAGE_INVALID_RESULT = "Flow %s, Job %s: %s; the flow counts as Failed"
MESSAGE_INVALID_OWN_RESULT = "JobFlow results: %s; left out of status.results"
