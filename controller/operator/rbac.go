package operator

// The permissions of what this package wires and that declares none of its
// own: the cluster state informers (controller/state/informer), the
// provisioner (controller/provisioning), the NodeClass reader and leader
// election. The controllers in controller/nodeclaim/... and
// controller/termination declare theirs beside their Register. `make
// generate` turns every marker into controller/deploy/rbac/role.yaml: a
// ClusterRole and, for the namespaced ones, a Role in stowage's namespace.

// Cluster state: every kind the scheduler's snapshot is built from.
// +kubebuilder:rbac:groups="",resources=nodes;pods;persistentvolumeclaims;persistentvolumes,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims;nodepools;nodeclasses,verbs=get;list;watch

// Provisioning: create the claims, and tell pods where they are going.
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Leader election: the Lease, and the core events client-go's leader
// election records about it, both in stowage's namespace only.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=stowage
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=stowage
