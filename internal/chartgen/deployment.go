package chartgen

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// envValues are the container's variables the values set, by name.
var envValues = map[string]string{
	"CLUSTER_NAME":      `{{ required "clusterName is required: the EKS cluster's name" .Values.clusterName | quote }}`,
	"CLUSTER_ENDPOINT":  `{{ required "clusterEndpoint is required: the API server URL nodes join, e.g. https://ABCD.gr7.us-east-1.eks.amazonaws.com" .Values.clusterEndpoint | quote }}`,
	"CLUSTER_CA_BUNDLE": `{{ .Values.clusterCABundle | quote }}`,
	"CLUSTER_CIDR":      `{{ .Values.clusterCIDR | quote }}`,
	"AWS_REGION":        `{{ required "region is required: the cluster's AWS region, e.g. us-east-1" .Values.region | quote }}`,
	"LOG_LEVEL":         `{{ .Values.logLevel | quote }}`,
	"LOG_FORMAT":        `{{ .Values.logFormat | quote }}`,
}

// optionalEnv are variables the manifests leave to the controller's
// defaults, set only when their value is.
var optionalEnv = [][2]string{{"PREFERENCE_POLICY", ".Values.preferencePolicy"}}

// editDeployment puts the values into the Deployment: replicas, service
// account, scheduling, image, args, environment and resources.
func (h *holes) editDeployment(u *unstructured.Unstructured) error {
	pod := []string{"spec", "template", "spec"}
	set := func(v any, fields ...string) error { return unstructured.SetNestedField(u.Object, v, fields...) }
	errs := []error{
		set(h.expr("{{ .Values.replicas }}"), "spec", "replicas"),
		set(h.expr(serviceAccount), append(pod, "serviceAccountName")...),
		set(h.optionalScalar("priorityClassName", ".Values.priorityClassName"), append(pod, "priorityClassName")...),
		set(h.optional("affinity", ".Values.affinity"), append(pod, "affinity")...),
		set(h.optional("topologySpreadConstraints", ".Values.topologySpreadConstraints"), append(pod, "topologySpreadConstraints")...),
		set(h.optional("nodeSelector", ".Values.nodeSelector"), append(pod, "nodeSelector")...),
		set(h.optional("tolerations", ".Values.tolerations"), append(pod, "tolerations")...),
	}
	containers, _, err := unstructured.NestedSlice(u.Object, append(pod, "containers")...)
	if err != nil || len(containers) != 1 {
		return fmt.Errorf("the Deployment has %d containers (%v), want 1", len(containers), err)
	}
	c, _ := containers[0].(map[string]any)
	if err := h.editContainer(c); err != nil {
		return err
	}
	errs = append(errs, unstructured.SetNestedSlice(u.Object, containers, append(pod, "containers")...))
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (h *holes) editContainer(c map[string]any) error {
	c["image"] = h.expr(`{{ include "stowage.image" . }}`)
	c["imagePullPolicy"] = h.optionalScalar("imagePullPolicy", ".Values.image.pullPolicy")
	args, _ := c["args"].([]any)
	c["args"] = append(args, h.block(func(in string) string {
		return in + "{{- range .Values.extraArgs }}\n" + in + "- {{ . | quote }}\n" + in + "{{- end }}"
	}))
	env, _ := c["env"].([]any)
	for _, e := range env {
		v, _ := e.(map[string]any)
		if expr, ok := envValues[fmt.Sprint(v["name"])]; ok {
			v["value"] = h.expr(expr)
		}
	}
	c["env"] = append(env, h.block(func(in string) string {
		var s string
		for _, o := range optionalEnv {
			s += fmt.Sprintf("%s{{- with %s }}\n%s- name: %s\n%s  value: {{ . | quote }}\n%s{{- end }}\n", in, o[1], in, o[0], in, in)
		}
		return s[:len(s)-1]
	}))
	c["resources"] = h.block(func(in string) string {
		return fmt.Sprintf("%sresources:\n%s  {{- toYaml .Values.resources | nindent %d }}", in, in, len(in)+2)
	})
	return nil
}
