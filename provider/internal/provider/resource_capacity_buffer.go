package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/provider/internal/crdschema"
)

var capacityBufferKind = &kind{
	typeName: "capacity_buffer", kind: "CapacityBuffer", plural: "capacitybuffers",
	apiVersion: autoscalingv1beta1.SchemeGroupVersion.String(), namespaced: true, spec: crdschema.CapacityBufferSpec,
	crd: capacityBufferCRD,
	description: "A CapacityBuffer (`autoscaling.x-k8s.io/v1beta1`, the API Cluster Autoscaler and Karpenter read too): warm " +
		"room for pods that do not exist yet, as many chunks as `replicas`, `percentage` and `limits` say, each of the shape " +
		"of a PodTemplate (`pod_template_ref`) or of a workload's pod template (`scalable_ref`: a Deployment, StatefulSet or " +
		"ReplicaSet of group apps, or a Job of group batch, the kinds Stowage reads). Stowage keeps nodes for the chunks, real " +
		"pods take the room first, and consolidation keeps it. Validated at plan time by the CRD's schema and rules and by " +
		"what Stowage needs (one of the two references; `percentage` only with `scalable_ref`). Written with server-side apply " +
		"and converged as a pool is; `namespace` and `name` force replacement. The cluster must serve the CRD: " +
		"`stowage_controller` installs it where no other owner has (reference it with `depends_on`). A create refuses a " +
		"buffer that already exists unless `adopt_existing` is set; import one by `namespace/name`.",
	goValidate: typedValidate[autoscalingv1beta1.CapacityBuffer],
	own:        []*crdschema.Node{{Name: "adopt_existing", Kind: crdschema.Bool}},
}

func newCapacityBufferResource() resource.Resource { return &objectResource{kind: capacityBufferKind} }

// capacityBufferCRD is the embedded CRD with only v1beta1, the version the
// resource writes (the CRD serves v1alpha1 too).
func capacityBufferCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	crd, err := autoscalingcrd.CapacityBuffer()
	if err != nil {
		return nil, err
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == autoscalingv1beta1.SchemeGroupVersion.Version {
			crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{v}
			return crd, nil
		}
	}
	return nil, fmt.Errorf("the CapacityBuffer CRD has no version %s", autoscalingv1beta1.SchemeGroupVersion.Version)
}
