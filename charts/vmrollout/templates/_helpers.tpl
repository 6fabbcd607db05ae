{{/* nameOverride replaces the chart's name in every object's name and in the app.kubernetes.io/name label. */}}
{{- define "vmrollout.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of every object's name: fullnameOverride, else <release>-<name>. No "release name
contains the chart name" shortcut: it would rename the objects of existing releases, the generated
payload keys Secret among them (a new key, and the histories written before unreadable).
*/}}
{{- define "vmrollout.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "vmrollout.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
An object name made of parts joined by "-", kept a DNS-1123 label (a Service's name must be one):
at most 63 characters. A longer one is cut to 54 and ends in 8 hex digits of its sha256, so that
two names cut alike (e.g. two builds' Deployments) stay apart. Names that fit are left as they are.
*/}}
{{- define "vmrollout.dnsLabel" -}}
{{- $full := join "-" . -}}
{{- if le (len $full) 63 -}}
{{- $full -}}
{{- else -}}
{{- printf "%s-%s" ($full | trunc 54 | trimSuffix "-" | trimSuffix "." ) ($full | sha256sum | trunc 8) -}}
{{- end -}}
{{- end -}}

{{/* <fullname>-<suffix>, a DNS-1123 label: call with (dict "root" $ "suffix" "worker"). */}}
{{- define "vmrollout.componentName" -}}
{{- include "vmrollout.dnsLabel" (list (include "vmrollout.fullname" .root) .suffix) -}}
{{- end -}}

{{- define "vmrollout.labels" -}}
app.kubernetes.io/name: {{ include "vmrollout.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "vmrollout.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/*
Worker Versioning (docs/upgrading.md): the Temporal Worker Deployment the worker is a version of
(default: the fullname, without the dots the server refuses there), this build's id (default: the
image tag; it names the build's Kubernetes Deployment and labels its pods, hence a label value), and
the Kubernetes Deployment of this build.
*/}}
{{- define "vmrollout.workerDeploymentName" -}}
{{- .Values.workerVersioning.deploymentName | default (include "vmrollout.fullname" . | replace "." "-") -}}
{{- end -}}

{{- define "vmrollout.buildId" -}}
{{- $id := .Values.workerVersioning.buildId | default (.Values.image.tag | default .Chart.AppVersion) | toString -}}
{{- if not (regexMatch "^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$" $id) -}}
{{- fail (printf "worker build id %q (workerVersioning.buildId, else image.tag, else appVersion) must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit: set workerVersioning.buildId" $id) -}}
{{- end -}}
{{- $id -}}
{{- end -}}

{{- define "vmrollout.workerBuildName" -}}
{{- include "vmrollout.dnsLabel" (list (include "vmrollout.fullname" .) "worker" (include "vmrollout.buildId" . | lower | replace "_" "-" | replace "." "-")) -}}
{{- end -}}

{{/*
The Secret of the payload keys: temporal.payloadKeysSecret, else the one the chart generates
(payload-keys-secret.yaml); empty only with temporal.insecurePlaintextPayloads.
*/}}
{{- define "vmrollout.payloadKeysSecretName" -}}
{{- if and .Values.temporal.insecurePlaintextPayloads .Values.temporal.payloadKeysSecret -}}
{{- fail "temporal.payloadKeysSecret and temporal.insecurePlaintextPayloads: set one of them, not both" -}}
{{- end -}}
{{- if not .Values.temporal.insecurePlaintextPayloads -}}
{{- .Values.temporal.payloadKeysSecret | default (include "vmrollout.componentName" (dict "root" . "suffix" "payload-keys")) -}}
{{- end -}}
{{- end -}}

{{/*
Temporal TLS (values.yaml temporal.tls): on when asked, or when a client certificate (tlsSecret)
or a CA Secret is named. The CA: tls.caSecret's key tls.caKey, else tlsSecret's key tls.caKey,
else none (the system roots). Without a client certificate the server's certificate is checked and
nothing else is presented: Temporal Cloud with an API key, or a frontend that does not ask for one.
*/}}
{{- define "vmrollout.temporalTls" -}}
{{- with .Values.temporal -}}
{{- if or .tls.enabled .tlsSecret .tls.caSecret }}true{{ end -}}
{{- end -}}
{{- end -}}

{{- define "vmrollout.temporalCaPath" -}}
{{- with .Values.temporal -}}
{{- if .tls.caSecret -}}
{{- if not .tls.caKey }}{{ fail "temporal.tls.caSecret: set temporal.tls.caKey, the Secret's key holding the CA certificate" }}{{ end -}}
/etc/temporal-ca/{{ .tls.caKey }}
{{- else if and .tlsSecret .tls.caKey -}}
/etc/temporal-tls/{{ .tls.caKey }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Environment shared by the worker and the trigger. */}}
{{- define "vmrollout.temporalEnv" -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- if include "vmrollout.payloadKeysSecretName" . }}
- name: TEMPORAL_PAYLOAD_KEYS_FILE
  value: /etc/vmrollout-payload-keys/keys
{{- end }}
{{- if include "vmrollout.temporalTls" . }}
- name: TEMPORAL_TLS
  value: "true"
{{- end }}
{{- if .Values.temporal.tlsSecret }}
- name: TEMPORAL_TLS_CERT
  value: /etc/temporal-tls/tls.crt
- name: TEMPORAL_TLS_KEY
  value: /etc/temporal-tls/tls.key
{{- end }}
{{- with include "vmrollout.temporalCaPath" . }}
- name: TEMPORAL_TLS_CA
  value: {{ . }}
{{- end }}
{{- with .Values.temporal.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if .Values.temporal.apiKeySecret }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.temporal.apiKeySecret }}
      key: api-key
{{- end }}
{{- end -}}

{{/* The Temporal connection of the hook Jobs' `temporal` CLI: the worker's, under the CLI's names for the TLS settings. */}}
{{- define "vmrollout.temporalCliEnv" -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
{{- if include "vmrollout.temporalTls" . }}
- name: TEMPORAL_TLS
  value: "true"
{{- end }}
{{- if .Values.temporal.tlsSecret }}
- name: TEMPORAL_TLS_CLIENT_CERT_PATH
  value: /etc/temporal-tls/tls.crt
- name: TEMPORAL_TLS_CLIENT_KEY_PATH
  value: /etc/temporal-tls/tls.key
{{- end }}
{{- with include "vmrollout.temporalCaPath" . }}
- name: TEMPORAL_TLS_SERVER_CA_CERT_PATH
  value: {{ . }}
{{- end }}
{{- with .Values.temporal.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if .Values.temporal.apiKeySecret }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.temporal.apiKeySecret }}
      key: api-key
{{- end }}
{{- end -}}

{{/* The Temporal TLS Secrets as volumes (a list's items), and their mounts: of the pods and of the hook Jobs. */}}
{{- define "vmrollout.temporalTlsVolumes" -}}
{{- with .Values.temporal.tlsSecret }}
- name: temporal-tls
  secret:
    secretName: {{ . }}
{{- end }}
{{- with .Values.temporal.tls.caSecret }}
- name: temporal-ca
  secret:
    secretName: {{ . }}
{{- end }}
{{- end -}}

{{- define "vmrollout.temporalTlsMounts" -}}
{{- if .Values.temporal.tlsSecret }}
- name: temporal-tls
  mountPath: /etc/temporal-tls
  readOnly: true
{{- end }}
{{- if .Values.temporal.tls.caSecret }}
- name: temporal-ca
  mountPath: /etc/temporal-ca
  readOnly: true
{{- end }}
{{- end -}}

{{/*
The volumes of the worker's and the trigger's pods: a writable /tmp (the root filesystem is
read-only), the Temporal TLS Secrets, the payload keys, then the component's extraVolumes. Call
with (dict "root" $ "values" <the component's values>).
*/}}
{{- define "vmrollout.volumes" -}}
{{- $root := .root }}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: 64Mi
{{- with include "vmrollout.temporalTlsVolumes" $root }}
  {{- . | trim | nindent 2 }}
{{- end }}
{{- if include "vmrollout.payloadKeysSecretName" $root }}
  - name: payload-keys
    secret:
      secretName: {{ include "vmrollout.payloadKeysSecretName" $root }}
{{- end }}
{{- with .values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "vmrollout.volumeMounts" -}}
{{- $root := .root }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
{{- if include "vmrollout.payloadKeysSecretName" $root }}
  - name: payload-keys
    mountPath: /etc/vmrollout-payload-keys
    readOnly: true
{{- end }}
{{- with include "vmrollout.temporalTlsMounts" $root }}
  {{- . | trim | nindent 2 }}
{{- end }}
{{- with .values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* ServiceAccount of a component ("worker" or "trigger"): <fullname>-<component>. */}}
{{- define "vmrollout.serviceAccountName" -}}
{{- include "vmrollout.componentName" (dict "root" .root "suffix" .component) -}}
{{- end -}}

{{/*
The Kubernetes API requests each process makes, as RBAC rules, in the namespaces it works in (every
namespace, or each of watchNamespaces). Derived from the code; keep in step with it:

trigger (trigger/kube.ts, trigger/watch.ts, kube/status-writer.ts, kube/route-records.ts):
  vmdistributedclusters get (status writer and finalizer read, orphan sweep), list + watch
  (informer), patch (its finalizer: a merge patch of metadata.finalizers);
  vmdistributedclusters/status patch (merge patch; the read before it is a get of the object);
  events create (core/v1 createNamespacedEvent);
  vmclusters, vmsingles, vmauths, vmusers, vmagents list + watch (drift informers; the route records list
  every VMAuth and VMUser of a namespace).
worker (activities/*.ts, kube/status-writer.ts, kube/route-records.ts):
  vmdistributedclusters get (the status writer reads the object by name before each patch);
  vmdistributedclusters/status patch;
  vmclusters, vmsingles, vmagents get + patch; vmauths, vmusers get + list + patch (reads, server-side apply, route merge patches);
  vmauths, vmusers list (readRecords and a zone's restore list the route records of the namespace);
  endpointslices list (the pods behind the vmagent, vmauth and vmselect services);
  services get, pods list (each endpoint verified against its Service's uid and the Pod it names:
  the pods the Service's selector selects, activities/pods/service-pods.ts);
  events create (a status write's Events: zone transitions, kube/events.ts).
Granted separately: create of VM objects (createNamespaces), the VMAuth config Secrets (vmauths),
the notification Secrets (notificationSecrets) and the vmagent metrics credentials
(vmagentMetricsAuthSecret), each a Role in one namespace.
*/}}
{{- define "vmrollout.rules.trigger" -}}
- apiGroups: ["vmrollout.io"]
  resources: ["vmdistributedclusters"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["vmrollout.io"]
  resources: ["vmdistributedclusters/status"]
  verbs: ["patch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
- apiGroups: ["operator.victoriametrics.com"]
  resources: ["vmclusters", "vmsingles", "vmauths", "vmusers", "vmagents"]
  verbs: ["list", "watch"]
{{- end -}}

{{- define "vmrollout.rules.worker" -}}
- apiGroups: ["vmrollout.io"]
  resources: ["vmdistributedclusters"]
  verbs: ["get"]
- apiGroups: ["vmrollout.io"]
  resources: ["vmdistributedclusters/status"]
  verbs: ["patch"]
- apiGroups: ["operator.victoriametrics.com"]
  resources: ["vmclusters", "vmsingles", "vmagents"]
  verbs: ["get", "patch"]
- apiGroups: ["operator.victoriametrics.com"]
  resources: ["vmauths", "vmusers"]
  verbs: ["get", "list", "patch"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["list"]
- apiGroups: [""]
  resources: ["services"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
{{- end -}}

{{/*
The config Secrets the worker may read, by namespace: {namespace: [vmauth-config-<name>, ...]},
from .Values.vmauths (<namespace>/<name>, as values.schema.json requires). Returned as JSON.
*/}}
{{- define "vmrollout.vmauthSecrets" -}}
{{- include "vmrollout.byNamespace" (list .Values.vmauths "vmauth-config-%s") }}
{{- end -}}

{{/*
The notification Secrets the worker may read, by namespace, from .Values.notificationSecrets
(<namespace>/<name>). Returned as JSON.
*/}}
{{- define "vmrollout.notificationSecrets" -}}
{{- include "vmrollout.byNamespace" (list .Values.notificationSecrets "%s") }}
{{- end -}}

{{/*
<namespace>/<name> references grouped by namespace, each name formatted: (list refs format) → JSON.
*/}}
{{- define "vmrollout.byNamespace" -}}
{{- $byNs := dict }}
{{- $format := index . 1 }}
{{- range $ref := index . 0 }}
{{- $parts := splitList "/" $ref }}
{{- $ns := index $parts 0 }}
{{- $names := list }}
{{- if hasKey $byNs $ns }}{{ $names = get $byNs $ns }}{{ end }}
{{- $_ := set $byNs $ns (append $names (printf $format (index $parts 1)) | uniq) }}
{{- end }}
{{- toJson $byNs }}
{{- end -}}

{{/*
Checks what values RBAC depends on and values.schema.json cannot say (each value's own form is the
schema's): namespaces outside watchNamespaces. Fails rendering with a clear message.
*/}}
{{- define "vmrollout.validate" -}}
{{- with .Values.watchNamespaces }}
{{- $watched := . }}
{{- range $ns := $.Values.createNamespaces }}
{{- if not (has $ns $watched) }}
{{- fail (printf "createNamespaces: %q is not in watchNamespaces (vmrollout never acts there)" $ns) }}
{{- end }}
{{- end }}
{{- range $ns, $_ := include "vmrollout.vmauthSecrets" $ | fromJson }}
{{- if not (has $ns $watched) }}
{{- fail (printf "vmauths: namespace %q is not in watchNamespaces (vmrollout never acts there)" $ns) }}
{{- end }}
{{- end }}
{{- range $ns, $_ := include "vmrollout.notificationSecrets" $ | fromJson }}
{{- if not (has $ns $watched) }}
{{- fail (printf "notificationSecrets: namespace %q is not in watchNamespaces (vmrollout never acts there)" $ns) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
