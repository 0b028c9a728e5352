package karpenter

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// meta keeps what a user wrote in an object's metadata: its name, labels and
// annotations. What the API server and Karpenter set (uid, resourceVersion,
// generation, timestamps, managed fields, finalizers, owners, Karpenter's
// hash annotations, kubectl's last-applied-configuration) describes the old
// object, not the new one, and is noted quietly.
func (c *converter) meta(in metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{Name: in.Name, Labels: in.Labels}
	var server []string
	for _, a := range slices.Sorted(maps.Keys(in.Annotations)) {
		if ownedAnnotation(a) {
			server = append(server, "annotations["+a+"]")
			continue
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[a] = in.Annotations[a]
	}
	for name, set := range map[string]bool{"uid": in.UID != "", "resourceVersion": in.ResourceVersion != "", "generation": in.Generation != 0,
		"creationTimestamp": !in.CreationTimestamp.IsZero(), "managedFields": len(in.ManagedFields) > 0, "finalizers": len(in.Finalizers) > 0,
		"ownerReferences": len(in.OwnerReferences) > 0, "deletionTimestamp": in.DeletionTimestamp != nil} {
		if set {
			server = append(server, name)
		}
	}
	if len(server) > 0 {
		slices.Sort(server)
		c.quiet("metadata", "not converted: %s, set by the API server, kubectl or Karpenter for the old object", strings.Join(server, ", "))
	}
	return out
}

// ownedAnnotation reports whether Karpenter or kubectl wrote an annotation.
func ownedAnnotation(key string) bool {
	domain, _, _ := strings.Cut(key, "/")
	return domain == v1alpha1.KarpenterGroup || domain == v1alpha1.KarpenterAWSGroup || domain == "compatibility.karpenter.sh" ||
		key == "kubectl.kubernetes.io/last-applied-configuration"
}

// quiet records a note that goes into the output as a comment but is not
// worth a warning: the status and server-set metadata of a dump.
func (c *converter) quiet(field, format string, args ...any) {
	c.out.Notes = append(c.out.Notes, Note{Field: field, Message: fmt.Sprintf(format, args...), Quiet: true})
}

// valueOf renders a left-out value for a comment, on one line when short.
func valueOf(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}
