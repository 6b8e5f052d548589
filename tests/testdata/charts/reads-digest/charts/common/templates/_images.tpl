{{/* The image of a block: registry/repository, then @digest when set, else :tag. */}}
{{- define "common.images.image" -}}
{{- $registry := .imageRoot.registry -}}
{{- $separator := ":" -}}
{{- $termination := .imageRoot.tag | toString -}}
{{- if .imageRoot.digest }}
    {{- $separator = "@" -}}
    {{- $termination = .imageRoot.digest | toString -}}
{{- end -}}
{{- printf "%s/%s%s%s" $registry .imageRoot.repository $separator $termination -}}
{{- end -}}
{{- define "common.names.fullname" -}}{{ .Release.Name }}{{- end -}}
