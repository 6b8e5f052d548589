{{- define "multi-values.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "multi-values.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "multi-values.image" -}}
{{- printf "%s/%s:%s" .registry .repository (.tag | toString) -}}
{{- end -}}
