package kube

import "k8s.io/apimachinery/pkg/runtime"

func fromUnstructured(obj map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into)
}

// Typed decodes an object's JSON into a typed API object.
func Typed(obj map[string]any, into any) error { return fromUnstructured(obj, into) }
