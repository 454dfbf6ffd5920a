{{/* The chart's name: the app.kubernetes.io/name label of every object. */}}
{{- define "jobflow-controller.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Every object's name: the release name if it contains the chart's name, else <release>-<chart>;
     `helm install jobflow-controller` gives manifests/' names. */}}
{{- define "jobflow-controller.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "jobflow-controller.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Helm's own labels: the only difference from `kubectl kustomize manifests/` (tests/unit/chart). */}}
{{- define "jobflow-controller.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end -}}

{{/* The pods' selector, as manifests/ has it (no release label: one release per namespace). */}}
{{- define "jobflow-controller.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jobflow-controller.name" . | quote }}
app.kubernetes.io/component: controller
{{- end -}}

{{/* An object's labels as in manifests/: name, component (when given), part-of; then Helm's.
     Call with (dict "root" $ "component" "controller"). */}}
{{- define "jobflow-controller.labels" -}}
app.kubernetes.io/name: {{ include "jobflow-controller.name" .root | quote }}
{{- with .component }}
app.kubernetes.io/component: {{ . | quote }}
{{- end }}
app.kubernetes.io/part-of: volcano
{{ include "jobflow-controller.helmLabels" .root }}
{{- end -}}

{{- define "jobflow-controller.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "jobflow-controller.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: the existing ServiceAccount to run as (serviceAccount.create is false)" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Lease: --leader-elect-resource-name's default unless leaderElection.resourceName is set. */}}
{{- define "jobflow-controller.leaseName" -}}
{{- default "jobflow-controller" .Values.leaderElection.resourceName -}}
{{- end -}}

{{- define "jobflow-controller.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.resourceNamespace -}}
{{- end -}}

{{- define "jobflow-controller.priorityClassName" -}}
{{- if .Values.priorityClass.create -}}
{{- default (include "jobflow-controller.fullname" .) .Values.priorityClass.name -}}
{{- else -}}
{{- .Values.priorityClass.name -}}
{{- end -}}
{{- end -}}

{{- define "jobflow-controller.webhookSecretName" -}}
{{- default (printf "%s-webhook-tls" (include "jobflow-controller.fullname" .)) .Values.webhook.certificate.secretName -}}
{{- end -}}

{{- define "jobflow-controller.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* A flag whose value is null is left out (the controller's default applies); 0 and false are given. */}}
{{- define "jobflow-controller.flag" -}}
{{- if not (kindIs "invalid" .value) }}
{{- if .int }}
- {{ printf "%s=%d" .flag (int64 .value) | quote }}
{{- else }}
- {{ printf "%s=%v" .flag .value | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The controller's command line, in manifests/' order, then the value flags, the webhook's, extraArgs. */}}
{{- define "jobflow-controller.args" -}}
{{- $v := .Values -}}
{{- if $v.sharding.enabled }}
- --shards={{ $v.sharding.shards }}
{{- end }}
- --leader-elect={{ $v.leaderElection.enabled }}
{{- if $v.leaderElection.enabled }}
- {{ printf "--leader-elect-resource-namespace=%s" (include "jobflow-controller.leaseNamespace" .) | quote }}
{{- include "jobflow-controller.flag" (dict "flag" "--leader-elect-resource-name" "value" $v.leaderElection.resourceName) }}
{{- include "jobflow-controller.flag" (dict "flag" "--leader-elect-lease-duration" "value" $v.leaderElection.leaseDuration) }}
{{- include "jobflow-controller.flag" (dict "flag" "--leader-elect-renew-deadline" "value" $v.leaderElection.renewDeadline) }}
{{- include "jobflow-controller.flag" (dict "flag" "--leader-elect-retry-period" "value" $v.leaderElection.retryPeriod) }}
{{- end }}
{{- if $v.healthz.enabled }}
- --enable-healthz=true
- --healthz-address=:{{ $v.healthz.port }}
{{- end }}
{{- if $v.metrics.enabled }}
- --enable-metrics=true
- --listen-address=:{{ $v.metrics.port }}
{{- end }}
{{- include "jobflow-controller.flag" (dict "int" true "flag" "--worker-threads" "value" $v.workerThreads) }}
{{- include "jobflow-controller.flag" (dict "flag" "--kube-api-qps" "value" $v.kubeAPIQPS) }}
{{- include "jobflow-controller.flag" (dict "int" true "flag" "--kube-api-burst" "value" $v.kubeAPIBurst) }}
{{- include "jobflow-controller.flag" (dict "int" true "flag" "--v" "value" $v.logLevel) }}
{{- include "jobflow-controller.flag" (dict "flag" "--log-format" "value" $v.logFormat) }}
{{- if not (kindIs "invalid" $v.controllers) }}
- {{ printf "--controllers=%s" (join "," $v.controllers) | quote }}
{{- end }}
{{- if $v.webhook.enabled }}
- --enable-webhook=true
- --webhook-address=:{{ $v.webhook.port }}
- --webhook-tls-cert-file=/etc/jobflow-controller/webhook/tls.crt
- --webhook-tls-private-key-file=/etc/jobflow-controller/webhook/tls.key
{{- end }}
{{- if $v.triggers.enabled }}
- --trigger-address=:{{ $v.triggers.port }}
- --trigger-tls-cert-file=/etc/jobflow-controller/triggers/tls.crt
- --trigger-tls-private-key-file=/etc/jobflow-controller/triggers/tls.key
{{- $kinds := list }}
{{- range $v.triggers.watchKinds }}
{{- $kinds = append $kinds (printf "%s/%s" (ternary .version (printf "%s/%s" .group .version) (eq (default "" .group) "")) .kind) }}
{{- end }}
{{- if $kinds }}
- {{ printf "--trigger-watch-kinds=%s" (join "," $kinds) }}
{{- end }}
{{- end }}
{{- range $v.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The pod template of the Deployment and of the sharded StatefulSet (manifests/sharding keeps
     them equal): the StatefulSet's adds POD_NAME, its ordinal being the preferred shard.
     Call with (dict "root" $ "sharded" true|false). */}}
{{- define "jobflow-controller.podTemplate" -}}
{{- $ := .root -}}
{{- $v := $.Values -}}
metadata:
  labels:
    {{- include "jobflow-controller.selectorLabels" $ | nindent 4 }}
    app.kubernetes.io/part-of: volcano
    {{- with $v.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  serviceAccountName: {{ include "jobflow-controller.serviceAccountName" $ | quote }}
  {{- with (include "jobflow-controller.priorityClassName" $) }}
  priorityClassName: {{ . | quote }}
  {{- end }}
  terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
  enableServiceLinks: false
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  affinity:
    {{- if $v.affinity }}
    {{- toYaml $v.affinity | nindent 4 }}
    {{- else }}
    # Keep the replicas on different nodes, so losing a node does not take them all.
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          podAffinityTerm:
            topologyKey: kubernetes.io/hostname
            labelSelector:
              matchLabels:
                {{- include "jobflow-controller.selectorLabels" $ | nindent 16 }}
    {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: jobflow-controller
      image: {{ include "jobflow-controller.image" $ | quote }}
      imagePullPolicy: {{ $v.image.pullPolicy | quote }}
      env:
        {{- if .sharded }}
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        {{- end }}
        # Fewer glibc arenas: a lower peak RSS with many threads (manifests/deployment.yaml).
        - name: MALLOC_ARENA_MAX
          value: "2"
      args:
        {{- include "jobflow-controller.args" $ | indent 8 }}
      {{- if or $v.metrics.enabled $v.healthz.enabled $v.webhook.enabled $v.triggers.enabled }}
      ports:
        {{- if $v.metrics.enabled }}
        - name: metrics
          containerPort: {{ $v.metrics.port }}
          protocol: TCP
        {{- end }}
        {{- if $v.healthz.enabled }}
        - name: healthz
          containerPort: {{ $v.healthz.port }}
          protocol: TCP
        {{- end }}
        {{- if $v.webhook.enabled }}
        - name: webhook
          containerPort: {{ $v.webhook.port }}
          protocol: TCP
        {{- end }}
        {{- if $v.triggers.enabled }}
        - name: trigger
          containerPort: {{ $v.triggers.port }}
          protocol: TCP
        {{- end }}
      {{- end }}
      {{- if $v.healthz.enabled }}
      # /livez fails only when a Lease held here has gone unrenewed for 20 s past its duration.
      livenessProbe:
        httpGet:
          path: /livez
          port: healthz
        initialDelaySeconds: 10
        periodSeconds: 10
        timeoutSeconds: 5
        failureThreshold: 3
      # /readyz waits for the informer caches; a standby is Ready too.
      readinessProbe:
        httpGet:
          path: /readyz
          port: healthz
        periodSeconds: 5
        timeoutSeconds: 5
        failureThreshold: 3
      {{- end }}
      {{- with $v.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        # The only writable path (Python's tempfile).
        - name: tmp
          mountPath: /tmp
        {{- if $v.webhook.enabled }}
        # A directory, never a subPath, so renewed certificates reach the pod.
        - name: webhook-tls
          mountPath: /etc/jobflow-controller/webhook
          readOnly: true
        {{- end }}
        {{- if $v.triggers.enabled }}
        - name: trigger-tls
          mountPath: /etc/jobflow-controller/triggers
          readOnly: true
        {{- end }}
  volumes:
    - name: tmp
      emptyDir:
        medium: Memory
        sizeLimit: 16Mi
    {{- if $v.webhook.enabled }}
    - name: webhook-tls
      secret:
        secretName: {{ include "jobflow-controller.webhookSecretName" $ | quote }}
    {{- end }}
    {{- if $v.triggers.enabled }}
    - name: trigger-tls
      secret:
        secretName: {{ default (printf "%s-triggers-tls" (include "jobflow-controller.fullname" $)) $v.triggers.secretName | quote }}
    {{- end }}
{{- end -}}
