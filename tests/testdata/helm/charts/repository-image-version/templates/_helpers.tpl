{{- define "repository-image-version.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "repository-image-version.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* repository/image:version of a block; a block without version takes the chart's appVersion. */}}
{{- define "repository-image-version.fullimage" -}}
{{- $version := .block.version | default .root.Chart.AppVersion -}}
{{- printf "%s/%s:%s" .block.repository .block.image ($version | toString) -}}
{{- end -}}
