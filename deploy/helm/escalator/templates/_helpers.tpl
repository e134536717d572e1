{{/* The chart's name, "escalator" unless nameOverride says otherwise. */}}
{{- define "escalator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of every object name: the release name when it already contains the chart's name
(`helm install escalator …` gives escalator-web, escalator-worker, … as deploy/base does).
Role suffixes add at most 7 characters, so it is cut at 56.
*/}}
{{- define "escalator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 56 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "escalator.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 56 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 56 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "escalator.labels" -}}
app.kubernetes.io/name: {{ include "escalator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: escalator
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* Labels that select this release's pods (both roles); immutable once installed. */}}
{{- define "escalator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "escalator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
Labels that select one role's pods: (dict "context" $ "role" "web"). Web and worker must never
select each other's pods.
*/}}
{{- define "escalator.roleSelectorLabels" -}}
{{ include "escalator.selectorLabels" .context }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "escalator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "escalator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: name the existing ServiceAccount to run as, or set serviceAccount.create=true" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* repository:tag, and @digest when one is set: the runtime then pulls by digest. */}}
{{- define "escalator.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/*
A config value as the string an environment variable holds. Numbers from values files arrive as
float64 (1048576 would print as 1.048576e+06), so whole numbers are printed as integers.
*/}}
{{- define "escalator.envString" -}}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) -}}
{{- . | int64 | toString -}}
{{- else -}}
{{- . | toString -}}
{{- end -}}
{{- end -}}

{{/* Where the relay targets file is mounted, and its key. */}}
{{- define "escalator.relayTargetsDir" -}}/etc/escalator/relay{{- end -}}
{{- define "escalator.relayTargetsKey" -}}relay-targets.yaml{{- end -}}
{{- define "escalator.relaySecretsDir" -}}/var/run/secrets/escalator/relay{{- end -}}

{{- define "escalator.relayTargetsConfigMap" -}}
{{- .Values.relay.existingConfigMap | default (printf "%s-relay-targets" (include "escalator.fullname" .)) -}}
{{- end -}}
