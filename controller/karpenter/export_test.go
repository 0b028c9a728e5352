package karpenter

// HCLSchemaPaths exports the HCL writer's view of the provider's schema of a
// kind, for the test that holds it against the provider's own.
func HCLSchemaPaths(kind string) ([]string, error) {
	n, err := hclSchema(kind)
	if err != nil {
		return nil, err
	}
	return n.paths(""), nil
}
