package catalogue

import "github.com/stowage-dev/stowage/controller/apis/v1alpha1"

// Labels of the accelerators that are not GPUs (AWS Inferentia and Trainium,
// which the Neuron device plugin advertises as aws.amazon.com/neuron devices).
// They belong with the other instance labels in apis/v1alpha1 and its
// WellKnownLabels; they live here until that package takes them.
const (
	LabelInstanceAcceleratorName         = v1alpha1.Group + "/instance-accelerator-name"
	LabelInstanceAcceleratorManufacturer = v1alpha1.Group + "/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount        = v1alpha1.Group + "/instance-accelerator-count"
)

// AcceleratorLabels lists the accelerator label keys.
var AcceleratorLabels = []string{LabelInstanceAcceleratorName, LabelInstanceAcceleratorManufacturer, LabelInstanceAcceleratorCount}
