{{/* The services this chart deploys, in start order. */}}
{{- define "platform.services" -}}
gateway catalog notify webhooks
{{- end }}

{{- define "platform.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "platform.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of one service's objects: <fullname>-<service>. Call with (dict "root" $ "service" "catalog"). */}}
{{- define "platform.serviceName" -}}
{{- printf "%s-%s" (include "platform.fullname" .root) .service | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "platform.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{ include "platform.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: {{ include "platform.name" .root }}
{{- end }}

{{- define "platform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platform.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .service }}
{{- end }}

{{- define "platform.image" -}}
{{- printf "%s/%s:%s" .root.Values.image.registry .service (default .root.Chart.AppVersion .root.Values.image.tag) }}
{{- end }}

{{/* Environment every container of a service gets (Deployment and migrate Job). */}}
{{- define "platform.env" -}}
{{- $v := index .root.Values .service }}
- name: LOG_LEVEL
  value: {{ .root.Values.logLevel | quote }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .root.Values.database.existingSecret }}
      key: {{ .root.Values.database.secretKey }}
{{- if or (eq .service "notify") (eq .service "webhooks") }}
- name: NATS_URL
  value: {{ .root.Values.nats.url | quote }}
{{- end }}
{{- if and (eq .service "notify") $v.whatsapp $v.whatsapp.existingSecret }}
- name: NOTIFY_CHANNEL_PROVIDER
  value: "whatsapp"
- name: WHATSAPP_ACCESS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $v.whatsapp.existingSecret }}
      key: {{ $v.whatsapp.tokenKey }}
- name: WHATSAPP_PHONE_NUMBER_ID
  value: {{ required "notify.whatsapp.phoneNumberId is required with notify.whatsapp.existingSecret" $v.whatsapp.phoneNumberId | quote }}
{{- end }}
{{- if eq .service "webhooks" }}
- name: SECRETS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .root.Values.secrets.existingSecret }}
      key: {{ .root.Values.secrets.secretKey }}
{{- end }}
{{- range $name, $value := $v.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}

{{- define "platform.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "platform.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end }}
