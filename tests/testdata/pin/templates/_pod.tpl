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
    image: quay.io/prometheus/node-exporter:v1.8.2
{{- end }}
