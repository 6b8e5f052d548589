{{- define "repository-override.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "repository-override.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "repository-override.imageName" -}}
{{- if .Values.oci_meta.enabled -}}
{{- .Values.oci_meta.repo -}}
{{- else -}}
{{- printf "%s/%s" .Values.image.registry .Values.image.repository -}}
{{- end -}}
:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
