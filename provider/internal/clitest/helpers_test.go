package clitest

import (
	"runtime"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

type schemaGVR = schema.GroupVersionResource

func goOSArch() string { return runtime.GOOS + "_" + runtime.GOARCH }
