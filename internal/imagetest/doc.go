// Package imagetest runs the controller's image as a cluster would: built
// by `make image`, pushed to a distribution registry on loopback with
// go-containerregistry, deployed by stowage_controller pinned by digest, and
// run under runc as the kubelet runs the Deployment's container, on the
// whole-system bed. It needs make tools (registry, crane, runc and the bed's
// components) and runs as root (runc on a cgroup v1 host).
package imagetest
