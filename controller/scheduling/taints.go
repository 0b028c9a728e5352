package scheduling

import (
	"fmt"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
)

// Tolerates returns nil when the tolerations tolerate every NoSchedule and NoExecute
// taint, or an error naming the first taint that is not tolerated. PreferNoSchedule
// taints never block.
func Tolerates(taints []corev1.Taint, tolerations []corev1.Toleration) error {
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !tolerated(t, tolerations) {
			return fmt.Errorf("taint %s is not tolerated", TaintString(t))
		}
	}
	return nil
}

func tolerated(t *corev1.Taint, tolerations []corev1.Toleration) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), t, true) {
			return true
		}
	}
	return false
}

// TaintString renders a taint as key=value:Effect.
func TaintString(t *corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}
