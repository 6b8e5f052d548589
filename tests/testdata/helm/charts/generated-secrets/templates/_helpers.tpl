{{- define "generated-secrets.image" -}}
{{ .registry }}/{{ .repository }}:{{ .tag }}{{ with .digest }}@{{ . }}{{ end }}
{{- end -}}
