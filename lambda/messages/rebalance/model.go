// Package rebalance reads EC2 Instance Rebalance Recommendations.
package rebalance

// Detail is the detail of an EC2 Instance Rebalance Recommendation (schema
// aws.ec2@EC2InstanceRebalanceRecommendation, version 0).
type Detail struct {
	// InstanceID is the spot instance at elevated risk of interruption.
	InstanceID string `json:"instance-id"`
}
