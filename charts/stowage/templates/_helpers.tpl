{{/* The controller's image: repository:tag, pinned by the digest when one is set; the tag is the chart's appVersion unless set. */}}
{{- define "stowage.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{ with .Values.image.digest }}@{{ . }}{{ end }}
{{- end }}
