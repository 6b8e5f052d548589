{{/*
A pod spec shared by the chart's workloads. Usage:
  image: {{ include "chart.image" . }}
*/}}
{{- define "chart.pod" -}}
containers:
  - name: app
    image: {{ include "chart.image" . }}
  - name: init
    image: '{{ index .Values "initImage" }}'
  - name: metrics
    image: quay.io/prometheus/node-exporter:v1.8.2@sha256:6752a15b1d58f5331b176461653e9aa9a819aa1210a89f9e355150bc1f0672e3
{{- end }}
