{{- define "registry-namespace.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "registry-namespace.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* imageRegistry/imageNamespace/name, then @digest when set, else :tag (default: the chart's appVersion). */}}
{{- define "registry-namespace.image" -}}
{{- $values := .root.Values -}}
{{- $name := list $values.imageRegistry $values.imageNamespace .image.name | compact | join "/" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $name .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $name (.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}
{{- end -}}
