{{/* Name of the chart's objects: the release name, with the chart name unless it is already in it. */}}
{{- define "onto-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels that select the operator's pods; never changed by an upgrade. */}}
{{- define "onto-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/component: operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "onto-operator.labels" -}}
{{ include "onto-operator.selectorLabels" . }}
app.kubernetes.io/part-of: coomia-dip
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "onto-operator.serviceAccountName" -}}
{{- default (include "onto-operator.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* The operator's RBAC rules, generated from src/permissions into files/rbac-rules.yaml. */}}
{{- define "onto-operator.rules" -}}
{{- .Files.Get "files/rbac-rules.yaml" | fromYaml | toJson -}}
{{- end -}}
