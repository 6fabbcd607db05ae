{{- define "vmrollout.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vmrollout.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "vmrollout.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
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
{{- if .Values.temporal.tlsSecret }}
- name: TEMPORAL_TLS_CERT
  value: /etc/temporal-tls/tls.crt
- name: TEMPORAL_TLS_KEY
  value: /etc/temporal-tls/tls.key
- name: TEMPORAL_TLS_CA
  value: /etc/temporal-tls/ca.crt
{{- end }}
{{- if .Values.temporal.apiKeySecret }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.temporal.apiKeySecret }}
      key: api-key
{{- end }}
{{- end -}}

{{- define "vmrollout.tlsVolume" -}}
{{- if .Values.temporal.tlsSecret }}
volumes:
  - name: temporal-tls
    secret:
      secretName: {{ .Values.temporal.tlsSecret }}
{{- end }}
{{- end -}}

{{- define "vmrollout.tlsMount" -}}
{{- if .Values.temporal.tlsSecret }}
volumeMounts:
  - name: temporal-tls
    mountPath: /etc/temporal-tls
    readOnly: true
{{- end }}
{{- end -}}
