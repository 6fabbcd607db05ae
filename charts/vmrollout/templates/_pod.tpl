{{- /*
The pods of the worker and the trigger (components.yaml), and what the hook Jobs share with them.
Per-component values (worker.*, trigger.*) come before the chart-wide ones of the same name.
*/}}

{{/*
The chart's environment of a component, call with (dict "root" $ "name" "worker"|"trigger").
extraEnv comes after it, so a name in both would silently replace the chart's value (the trust
policy among them): vmrollout.extraEnv refuses that.
*/}}
{{- define "vmrollout.componentEnv" -}}
{{- $root := .root }}
{{- $c := index $root.Values .name }}
{{- $worker := eq .name "worker" }}
{{ include "vmrollout.temporalEnv" $root }}
- name: METRICS_PORT
  value: {{ $c.metricsPort | quote }}
# /metrics, /healthz and /readyz on the pod IP only (kubelet probes and scrapes it there).
- name: METRICS_HOST
  {{- if $c.metricsHost }}
  value: {{ $c.metricsHost | quote }}
  {{- else }}
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
  {{- end }}
- name: CREATE_NAMESPACES
  value: {{ join "," ($root.Values.createNamespaces | uniq) | quote }}
- name: ALLOW_CROSS_NAMESPACE_TARGET_REFS
  value: {{ ternary "true" "false" $root.Values.allowCrossNamespaceTargetRefs | quote }}
{{- with $root.Values.trustPolicy }}
- name: TRUST_ALLOWED_ROUTE_HOSTS
  value: {{ join "," (.allowedRouteHosts | default list | uniq) | quote }}
- name: TRUST_ALLOWED_REMOTE_WRITE_HOSTS
  value: {{ join "," (.allowedRemoteWriteHosts | default list | uniq) | quote }}
- name: TRUST_ALLOWED_IMAGE_REPOSITORIES
  value: {{ join "," (.allowedImageRepositories | default list | uniq) | quote }}
- name: TRUST_ALLOWED_SERVICE_ACCOUNT_NAMES
  value: {{ join "," (.allowedServiceAccountNames | default list | uniq) | quote }}
- name: TRUST_ALLOW_HOST_ACCESS
  value: {{ ternary "true" "false" .allowHostAccess | quote }}
- name: TRUST_ALLOW_EXTRA_CONTAINERS
  value: {{ ternary "true" "false" .allowExtraContainers | quote }}
- name: TRUST_ALLOW_CROSS_NAMESPACE_SELECTORS
  value: {{ ternary "true" "false" .allowCrossNamespaceSelectors | quote }}
- name: TRUST_ALLOW_OTHER_DESTINATIONS
  value: {{ ternary "true" "false" .allowOtherDestinations | quote }}
{{- end }}
{{- if $worker }}
- name: WORKFLOW_BUNDLE
  value: /app/dist/workflow-bundle.js
# Every rollout is pinned to the build that starts it (docs/upgrading.md).
- name: TEMPORAL_WORKER_DEPLOYMENT_NAME
  value: {{ include "vmrollout.workerDeploymentName" $root | quote }}
- name: TEMPORAL_WORKER_BUILD_ID
  value: {{ include "vmrollout.buildId" $root | quote }}
{{- if $root.Values.vmagentMetricsAuthSecret }}
- name: VMAGENT_METRICS_AUTH_SECRET
  value: {{ printf "%s/%s" $root.Release.Namespace $root.Values.vmagentMetricsAuthSecret | quote }}
{{- end }}
# The pod name survives a container restart: a restarted worker releases at once the
# attempts its killed predecessor held instead of leaving them to their heartbeat timeout.
- name: WORKER_INSTANCE
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- with $c.malloc }}
- name: MALLOC_ARENA_MAX
  value: {{ .arenaMax | quote }}
- name: MALLOC_TRIM_THRESHOLD_
  value: {{ .trimThreshold | quote }}
- name: MALLOC_MMAP_THRESHOLD_
  value: {{ .mmapThreshold | quote }}
{{- end }}
{{- with $c.maxConcurrentActivities }}
- name: MAX_CONCURRENT_ACTIVITIES
  value: {{ . | quote }}
{{- end }}
{{- with $c.maxCachedWorkflows }}
- name: MAX_CACHED_WORKFLOWS
  value: {{ . | quote }}
{{- end }}
{{- else }}
- name: WATCH_NAMESPACES
  value: {{ join "," $root.Values.watchNamespaces | quote }}
{{- with $c.reconcileConcurrency }}
- name: RECONCILE_CONCURRENCY
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* A component's extraEnv, refused where it names a variable the chart sets (set that one by its value). */}}
{{- define "vmrollout.extraEnv" -}}
{{- $chartEnv := include "vmrollout.componentEnv" . | fromYamlArray }}
{{- $taken := list }}
{{- range $chartEnv }}{{ $taken = append $taken .name }}{{ end }}
{{- $extra := (index .root.Values .name).extraEnv | default list }}
{{- range $extra }}
{{- if has .name $taken }}
{{- fail (printf "%s.extraEnv: %s is set by the chart; set it with its chart value (values.yaml)" $.name .name) }}
{{- end }}
{{- end }}
{{- with $extra }}{{ toYaml . }}{{ end }}
{{- end -}}

{{/* The chart's labels of a pod, call with (dict "root" $ "name" <component>): the worker's carry its build id. */}}
{{- define "vmrollout.podChartLabels" -}}
{{ include "vmrollout.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- if eq .name "worker" }}
vmrollout.io/build-id: {{ include "vmrollout.buildId" .root | quote }}
{{- end }}
{{- end -}}

{{/*
The labels of a component's pods besides the selector's: podLabels (chart-wide, then the
component's). A key the chart sets itself is refused: the Deployment's selector and the
NetworkPolicy, PodDisruptionBudget and VMServiceScrape select the pods by those.
Call with (dict "root" $ "values" <the component's values or empty dict> "chartLabels" <map>).
*/}}
{{- define "vmrollout.podLabels" -}}
{{- $labels := merge (dict) (.values.podLabels | default dict) (.root.Values.podLabels | default dict) }}
{{- range $k, $_ := $labels }}
{{- if hasKey $.chartLabels $k }}
{{- fail (printf "podLabels: %s is set by the chart (its selectors select the pods by it)" $k) }}
{{- end }}
{{- end }}
{{- with $labels }}{{ toYaml . }}{{ end }}
{{- end -}}

{{/* podAnnotations: chart-wide, then the component's (which win). Call with (dict "root" $ "values" ...). */}}
{{- define "vmrollout.podAnnotations" -}}
{{- with merge (dict) (.values.podAnnotations | default dict) (.root.Values.podAnnotations | default dict) }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
Where a pod may run and what it may pull, pod spec fields: imagePullSecrets, priorityClassName,
nodeSelector, tolerations, affinity and topologySpreadConstraints, each the component's value when
set, else the chart-wide one. Call with (dict "root" $ "values" <component values or empty dict>
"spread" <default topologySpreadConstraints, or empty list> "selector" <the labels that select the
component's pods>).
*/}}
{{- define "vmrollout.podPlacement" -}}
{{- $v := .values }}
{{- $g := .root.Values }}
{{- with $g.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.priorityClassName | default $g.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with $v.nodeSelector | default $g.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations | default $g.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity | default $g.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $spread := list }}
{{- range $v.topologySpreadConstraints | default .spread }}
{{- /* Without a labelSelector a constraint counts no pod at all (the API server warns): the component's own pods. */}}
{{- $spread = append $spread (ternary . (merge (dict "labelSelector" (dict "matchLabels" $.selector)) .) (hasKey . "labelSelector")) }}
{{- end }}
{{- with $spread }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The worker's default spread (worker.defaultTopologySpread): its pods of one build (the labelSelector
vmrollout.podPlacement adds) apart across each topology key, soft (ScheduleAnyway) so that a cluster of one zone or one node still runs them all.
Returned as JSON (a list), empty when disabled.
*/}}
{{- define "vmrollout.workerSpread" -}}
{{- $spread := list }}
{{- with .Values.worker.defaultTopologySpread }}
{{- if .enabled }}
{{- range $key := .topologyKeys }}
{{- $spread = append $spread (dict "maxSkew" 1 "topologyKey" $key "whenUnsatisfiable" "ScheduleAnyway") }}
{{- end }}
{{- end }}
{{- end }}
{{- toJson $spread }}
{{- end -}}
