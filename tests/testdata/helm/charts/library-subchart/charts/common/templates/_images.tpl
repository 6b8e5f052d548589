{{/*
The image of an image block: registry/repository, then @digest when the block has a digest, else :tag.
A non-empty global.imageRegistry replaces the block's registry.
Usage: {{ include "common.images.image" (dict "imageRoot" .Values.image "global" .Values.global) }}
*/}}
{{- define "common.images.image" -}}
{{- $registry := .imageRoot.registry -}}
{{- if and .global .global.imageRegistry -}}
{{- $registry = .global.imageRegistry -}}
{{- end -}}
{{- $name := printf "%s/%s" $registry .imageRoot.repository -}}
{{- if .imageRoot.digest -}}
{{- printf "%s@%s" $name (.imageRoot.digest | toString) -}}
{{- else -}}
{{- printf "%s:%s" $name (.imageRoot.tag | toString) -}}
{{- end -}}
{{- end -}}

{{/* The pull policy of an image block: IfNotPresent unless the block names one. */}}
{{- define "common.images.pullPolicy" -}}
{{- .imageRoot.pullPolicy | default "IfNotPresent" -}}
{{- end -}}
