{{- define "tag-in-selector.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The tag as a label value: characters labels refuse become "_", at most 63 characters. */}}
{{- define "tag-in-selector.version" -}}
{{- .Values.image.tag | toString | replace "@" "_" | replace ":" "_" | trunc 63 | trimSuffix "_" -}}
{{- end -}}

{{/* Used by the selector too, so the version is part of what selects the pods. */}}
{{- define "tag-in-selector.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ include "tag-in-selector.version" . | quote }}
{{- end -}}
