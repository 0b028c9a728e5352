package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// volumeTopology turns a pod's persistent volume claims into node requirements: a
// bound volume's node affinity, or the allowed topologies of the storage class that
// will provision it when the pod is scheduled (WaitForFirstConsumer).
type volumeTopology struct {
	claims  map[string]*corev1.PersistentVolumeClaim // namespace/name -> claim
	volumes map[string]*corev1.PersistentVolume
	classes map[string]*storagev1.StorageClass
}

func newVolumeTopology(s *Snapshot) *volumeTopology {
	v := &volumeTopology{claims: map[string]*corev1.PersistentVolumeClaim{}, volumes: map[string]*corev1.PersistentVolume{}, classes: map[string]*storagev1.StorageClass{}}
	for _, c := range s.PersistentVolumeClaims {
		v.claims[c.Namespace+"/"+c.Name] = c
	}
	for _, pv := range s.PersistentVolumes {
		v.volumes[pv.Name] = pv
	}
	for _, sc := range s.StorageClasses {
		v.classes[sc.Name] = sc
	}
	return v
}

// terms returns the pod's node terms narrowed by its volumes, or an error naming
// the volume that cannot be satisfied.
func (v *volumeTopology) terms(pod *corev1.Pod, terms []scheduling.Requirements) ([]scheduling.Requirements, error) {
	for _, vol := range pod.Spec.Volumes {
		claimName := ""
		switch {
		case vol.PersistentVolumeClaim != nil:
			claimName = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			claimName = pod.Name + "-" + vol.Name
		default:
			continue
		}
		alternatives, err := v.claimTerms(pod.Namespace, claimName, vol.Ephemeral != nil)
		if err != nil {
			return nil, err
		}
		if alternatives != nil {
			terms = crossTerms(terms, alternatives)
		}
	}
	return terms, nil
}

func (v *volumeTopology) claimTerms(namespace, name string, ephemeral bool) ([]scheduling.Requirements, error) {
	pvc, ok := v.claims[namespace+"/"+name]
	if !ok {
		if ephemeral {
			return nil, nil // created with the pod; its storage class decides nothing here
		}
		return nil, fmt.Errorf("persistentvolumeclaim %s/%s does not exist", namespace, name)
	}
	if pvc.Spec.VolumeName != "" {
		pv, ok := v.volumes[pvc.Spec.VolumeName]
		if !ok {
			return nil, fmt.Errorf("persistentvolumeclaim %s/%s is bound to persistentvolume %s, which does not exist", namespace, name, pvc.Spec.VolumeName)
		}
		return volumeNodeTerms(pv), nil
	}
	if pvc.Spec.StorageClassName == nil {
		return nil, nil
	}
	sc, ok := v.classes[*pvc.Spec.StorageClassName]
	if !ok {
		return nil, fmt.Errorf("persistentvolumeclaim %s/%s names storageclass %s, which does not exist", namespace, name, *pvc.Spec.StorageClassName)
	}
	if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return nil, fmt.Errorf("persistentvolumeclaim %s/%s is not bound yet and storageclass %s binds immediately; wait for the volume or use volumeBindingMode WaitForFirstConsumer", namespace, name, sc.Name)
	}
	var out []scheduling.Requirements
	for _, t := range sc.AllowedTopologies {
		reqs := scheduling.Requirements{}
		for _, e := range t.MatchLabelExpressions {
			reqs.Add(scheduling.NewRequirement(e.Key, v1alpha1.OperatorIn, e.Values...))
		}
		out = append(out, reqs)
	}
	return out, nil
}

func volumeNodeTerms(pv *corev1.PersistentVolume) []scheduling.Requirements {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	var out []scheduling.Requirements
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		out = append(out, scheduling.FromNodeSelector(t.MatchExpressions))
	}
	return out
}

// crossTerms ANDs two ORs of terms.
func crossTerms(a, b []scheduling.Requirements) []scheduling.Requirements {
	var out []scheduling.Requirements
	for _, x := range a {
		for _, y := range b {
			out = append(out, x.Merge(y))
		}
	}
	return out
}
