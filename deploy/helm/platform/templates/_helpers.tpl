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

{{/*
The gateway's gRPC target of one service: every ready pod of it, through its headless Service,
re-resolved by the client (round_robin over all of them). Call with (dict "root" $ "service" "catalog").
*/}}
{{- define "platform.grpcTarget" -}}
{{- $v := index .root.Values .service }}
{{- printf "dns:///%s-headless.%s.svc.%s:%v" (include "platform.serviceName" .) .root.Release.Namespace .root.Values.clusterDomain $v.port }}
{{- end }}

{{- define "platform.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{ include "platform.selectorLabels" . }}
app.kubernetes.io/version: {{ include "platform.imageTag" . | replace ":" "_" | replace "@" "_" | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: {{ include "platform.name" .root }}
{{- end }}

{{- define "platform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platform.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .service }}
{{- end }}

{{/* Labels of a service's migrate Job pods: not its selector labels, so no Service, PDB or HPA counts them. */}}
{{- define "platform.migrateSelectorLabels" -}}
app.kubernetes.io/name: {{ include "platform.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .service }}-migrate
{{- end }}

{{/* The tag of a service's image: <svc>.image.tag, else the service's own version (Chart.yaml annotation platform/<svc>-version). */}}
{{- define "platform.imageTag" -}}
{{- $v := index .root.Values .service }}
{{- $annotation := printf "platform/%s-version" .service }}
{{- $version := index (default dict .root.Chart.Annotations) $annotation }}
{{- default (required (printf "Chart.yaml lacks the annotation %s" $annotation) $version) $v.image.tag }}
{{- end }}

{{/* <registry>/<repository>:<tag>; the registry is <svc>.image.registry, else image.registry (empty: none). */}}
{{- define "platform.image" -}}
{{- $v := index .root.Values .service }}
{{- $registry := default .root.Values.image.registry $v.image.registry }}
{{- $repository := default .service $v.image.repository }}
{{- if $registry }}
{{- printf "%s/%s:%s" (trimSuffix "/" $registry) $repository (include "platform.imageTag" .) }}
{{- else }}
{{- printf "%s:%s" $repository (include "platform.imageTag" .) }}
{{- end }}
{{- end }}

{{- define "platform.imagePullPolicy" -}}
{{- $v := index .root.Values .service }}
{{- default .root.Values.image.pullPolicy $v.image.pullPolicy }}
{{- end }}

{{- define "platform.serviceAccountName" -}}
{{- $v := index .root.Values .service }}
{{- if $v.serviceAccount.create }}
{{- default (include "platform.serviceName" .) $v.serviceAccount.name }}
{{- else }}
{{- required (printf "%s.serviceAccount.name is required when %s.serviceAccount.create is false" .service .service) $v.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The migrate Job's own ServiceAccount (a hook, so it exists before the pre-install Job), or the given one. */}}
{{- define "platform.migrateServiceAccountName" -}}
{{- $v := index .root.Values .service }}
{{- if $v.serviceAccount.create }}
{{- printf "%s-migrate" (include "platform.serviceName" .) | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- include "platform.serviceAccountName" . }}
{{- end }}
{{- end }}

{{/* WEBHOOKS_ALLOWED_PORTS as the service reads it: 443 (always allowed) and webhooks.allowedPorts. */}}
{{- define "platform.webhooksAllowedPorts" -}}
{{- $ports := list "443" }}
{{- range .root.Values.webhooks.allowedPorts }}{{ $ports = append $ports (toString .) }}{{ end }}
{{- join "," $ports }}
{{- end }}

{{/* Environment every container of a service gets (Deployment and migrate Job). */}}
{{- define "platform.env" -}}
{{- $v := index .root.Values .service }}
- name: LOG_LEVEL
  value: {{ .root.Values.logLevel | quote }}
{{- with .root.Values.tracing }}
{{- if .otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .otlpEndpoint | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .sampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .samplerArg | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ index (.serviceNames | default dict) $.service | default $.service | quote }}
{{- end }}
{{- end }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .root.Values.database.existingSecret }}
      key: {{ .root.Values.database.secretKey }}
{{- if or (eq .service "notify") (eq .service "webhooks") }}
- name: NATS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .root.Values.nats.existingSecret }}
      key: {{ .root.Values.nats.secretKey }}
- name: NATS_STREAM_REPLICAS
  value: {{ .root.Values.nats.streamReplicas | quote }}
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
{{- if and (eq .service "gateway") $v.whatsappCallbacks $v.whatsappCallbacks.existingSecret }}
- name: WHATSAPP_APP_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ $v.whatsappCallbacks.existingSecret }}
      key: {{ $v.whatsappCallbacks.appSecretKey }}
- name: WHATSAPP_VERIFY_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $v.whatsappCallbacks.existingSecret }}
      key: {{ $v.whatsappCallbacks.verifyTokenKey }}
{{- end }}
{{- if and (eq .service "webhooks") .root.Values.webhooks.allowedPorts }}
- name: WEBHOOKS_ALLOWED_PORTS
  value: {{ include "platform.webhooksAllowedPorts" . | quote }}
{{- end }}
{{- if or (eq .service "webhooks") (eq .service "notify") }}
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

{{/*
NetworkPolicy peers from a values block {cidrs, namespaceSelector, podSelector}: an ipBlock per
CIDR and one selector peer. Call with (dict "peer" .Values.networkPolicy.postgres "name" "networkPolicy.postgres").
An empty block fails: an empty peer list would allow every address.
*/}}
{{- define "platform.peers" -}}
{{- $p := .peer }}
{{- if not (or $p.cidrs $p.namespaceSelector $p.podSelector) }}
{{- fail (printf "%s needs cidrs, a namespaceSelector or a podSelector" .name) }}
{{- end }}
{{- range $p.cidrs }}
- ipBlock:
    cidr: {{ . }}
{{- end }}
{{- if or $p.namespaceSelector $p.podSelector }}
- {{- with $p.namespaceSelector }}
  namespaceSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $p.podSelector }}
  podSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
Public addresses only, for the HTTPS egress of webhooks (and notify's WhatsApp): everything but the
ranges services/webhooks/src/domain/target-address.ts refuses (test/helm-objects.test.ts keeps the
two lists equal). IPv6 also leaves out NAT64 (64:ff9b::/96) and 6to4 (2002::/16), whose embedded
IPv4 address the code checks and a policy cannot.
*/}}
{{- define "platform.publicPeers" -}}
- ipBlock:
    cidr: 0.0.0.0/0
    except:
      - 0.0.0.0/8
      - 127.0.0.0/8
      - 10.0.0.0/8
      - 172.16.0.0/12
      - 192.168.0.0/16
      - 100.64.0.0/10
      - 169.254.169.254/32
      - 169.254.0.0/16
      - 192.0.0.0/24
      - 192.0.2.0/24
      - 192.88.99.0/24
      - 198.18.0.0/15
      - 198.51.100.0/24
      - 203.0.113.0/24
      - 224.0.0.0/4
      - 240.0.0.0/4
- ipBlock:
    cidr: ::/0
    except:
      - fd00:ec2::254/128
      - ::/128
      - ::1/128
      - fc00::/7
      - fe80::/10
      - fec0::/10
      - ff00::/8
      - 2001:db8::/32
      - 100::/64
      - 2001::/23
      - 64:ff9b::/96
      - 2002::/16
{{- end }}

{{- define "platform.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "platform.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "platform.name" . }}
{{- end }}
