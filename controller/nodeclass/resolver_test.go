package nodeclass_test

import (
	"github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/nodeclass"
)

// The operator runs the controller only when the cloud is a Resolver: keep
// the AWS provider one.
var _ nodeclass.Resolver = (*aws.CloudProvider)(nil)
