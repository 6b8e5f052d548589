{{- define "suffix-flag.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "suffix-flag.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "suffix-flag.exporterImage" -}}
{{- with .Values.image -}}
{{ .registry }}/{{ .repository }}:{{ .tag }}{{ if .distroless }}-distroless{{ end }}{{ with .digest }}@{{ . }}{{ end }}
{{- end -}}
{{- end -}}

{{- define "suffix-flag.gatewayImage" -}}
{{- $suffix := ternary "-hardened" "" (.Values.hub.hardened | default false) -}}
{{- with .Values.gateway.image -}}
{{ .registry }}/{{ .repository }}:{{ .tag }}{{ $suffix }}
{{- end -}}
{{- end -}}
