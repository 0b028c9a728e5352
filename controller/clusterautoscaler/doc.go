// Package clusterautoscaler reads the node groups a Cluster Autoscaler scales,
// as the AWS CLI prints them (`aws eks describe-nodegroup`, `aws autoscaling
// describe-auto-scaling-groups`, and `aws ec2 describe-launch-template-versions`
// for groups whose instance type lives in their launch template), and
// proposes the Stowage NodePools and NodeClasses that serve the same
// workloads with diversified instance types: `stowage import
// cluster-autoscaler`, and the node groups of `stowage simulate --compare
// cas --node-groups`.
package clusterautoscaler
