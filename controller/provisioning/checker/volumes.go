package checker

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// boundVolumes are the persistent volumes bound to the pod's claims.
func (c *checker) boundVolumes(pod *corev1.Pod) []*corev1.PersistentVolume {
	var out []*corev1.PersistentVolume
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		pvc := c.findClaim(pod.Namespace, vol.PersistentVolumeClaim.ClaimName)
		if pvc == nil || pvc.Spec.VolumeName == "" {
			continue
		}
		if pv := c.findVolume(pvc.Spec.VolumeName); pv != nil {
			out = append(out, pv)
		}
	}
	return out
}

func (c *checker) findClaim(namespace, name string) *corev1.PersistentVolumeClaim {
	for _, pvc := range c.snap.PersistentVolumeClaims {
		if pvc.Namespace == namespace && pvc.Name == name {
			return pvc
		}
	}
	return nil
}

func (c *checker) findVolume(name string) *corev1.PersistentVolume {
	for _, pv := range c.snap.PersistentVolumes {
		if pv.Name == name {
			return pv
		}
	}
	return nil
}

// volumeAllows reports whether the volume's required node affinity accepts the node.
func volumeAllows(pv *corev1.PersistentVolume, nd *corev1.Node) bool {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return true
	}
	sel, err := nodeaffinity.NewNodeSelector(pv.Spec.NodeAffinity.Required)
	return err == nil && sel.Match(nd)
}
