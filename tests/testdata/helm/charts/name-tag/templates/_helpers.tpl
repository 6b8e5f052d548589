{{- define "name-tag.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "name-tag.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* An image block {name, tag}: the tag is optional. */}}
{{- define "name-tag.image" -}}
{{- .name -}}{{- with .tag }}:{{ . }}{{ end -}}
{{- end -}}
