package crdschema

// NodePoolSpec maps the NodePool CRD: the template's metadata and spec are
// flattened, so that a pool reads `requirement { ... }` and `labels = {...}`.
var NodePoolSpec = Spec{
	Flatten: []string{"spec", "spec.template", "spec.template.metadata", "spec.template.spec"},
	Exclude: map[string]string{
		"spec.template.spec.taints.timeAdded":        "set by the node lifecycle controller on a node's NoExecute taints, never by a pool",
		"spec.template.spec.startupTaints.timeAdded": "set by the node lifecycle controller on a node's NoExecute taints, never by a pool",
	},
	Descriptions: map[string]string{
		"spec.template.metadata.annotations": "Annotations put on every node of the pool.",
	},
}

// NodeClassSpec maps the NodeClass CRD.
var NodeClassSpec = Spec{
	Flatten: []string{"spec"},
	Names: map[string]string{
		"spec.metadataOptions.httpProtocolIPv6": "http_protocol_ipv6",
	},
	Descriptions: map[string]string{
		"spec.amiSelectorTerms.id":                         "ID of one image, ami-...; exclusive with the other fields of the term.",
		"spec.amiSelectorTerms.name":                       "Name of the images, wildcards allowed.",
		"spec.amiSelectorTerms.owner":                      "Owner of the images: an account id, or self or amazon.",
		"spec.subnetSelectorTerms.id":                      "ID of one subnet, subnet-...; exclusive with tags.",
		"spec.securityGroupSelectorTerms.id":               "ID of one security group, sg-...; exclusive with tags and name.",
		"spec.securityGroupSelectorTerms.name":             "Name of the security groups.",
		"spec.blockDeviceMappings.deviceName":              "Device name of the volume, such as /dev/xvda.",
		"spec.blockDeviceMappings.ebs.volumeSize":          "Size of the volume, a quantity such as 100Gi.",
		"spec.blockDeviceMappings.ebs.volumeType":          "EBS volume type.",
		"spec.blockDeviceMappings.ebs.iops":                "Provisioned IOPS, for io1, io2 and gp3.",
		"spec.blockDeviceMappings.ebs.throughput":          "Throughput in MiB/s, for gp3.",
		"spec.blockDeviceMappings.ebs.encrypted":           "Encrypts the volume.",
		"spec.blockDeviceMappings.ebs.kmsKeyID":            "KMS key that encrypts the volume; the account's default EBS key when unset.",
		"spec.blockDeviceMappings.ebs.deleteOnTermination": "Deletes the volume when the instance terminates.",
		"spec.blockDeviceMappings.ebs.snapshotID":          "Snapshot the volume starts from.",
	},
}

// CapacityBufferSpec maps the CapacityBuffer CRD of autoscaling.x-k8s.io
// (v1beta1): its spec is flattened, so that a buffer reads `replicas = 1`
// and `scalable_ref { ... }`.
var CapacityBufferSpec = Spec{Flatten: []string{"spec"}}
