package checker

import (
	corev1 "k8s.io/api/core/v1"
)

// hostPort is one host port a pod binds on its node.
type hostPort struct {
	protocol corev1.Protocol
	ip       string
	port     int32
	at       *podAt
}

// conflicts reports whether two bindings collide: same port and protocol, and
// the same address or a wildcard on either side.
func (h hostPort) conflicts(o hostPort) bool {
	wild := func(ip string) bool { return ip == "" || ip == "0.0.0.0" || ip == "::" }
	return h.port == o.port && h.protocol == o.protocol && (h.ip == o.ip || wild(h.ip) || wild(o.ip))
}

// hostPortsOf lists the host ports of a pod's containers and sidecars.
func hostPortsOf(at *podAt) []hostPort {
	var out []hostPort
	add := func(c *corev1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			out = append(out, hostPort{protocol: proto, ip: p.HostIP, port: p.HostPort, at: at})
		}
	}
	for i := range at.pod.Spec.Containers {
		add(&at.pod.Spec.Containers[i])
	}
	for i := range at.pod.Spec.InitContainers {
		if c := &at.pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	return out
}

// checkHostPorts verifies no two pods on a node bind the same host port, unless
// both were already bound.
func (c *checker) checkHostPorts() {
	for _, n := range c.nodes {
		var seen []hostPort
		for _, at := range n.pods {
			for _, hp := range hostPortsOf(at) {
				c.checkHostPort(n, hp, seen)
			}
			seen = append(seen, hostPortsOf(at)...)
		}
	}
}

func (c *checker) checkHostPort(n *node, hp hostPort, seen []hostPort) {
	for _, o := range seen {
		if hp.conflicts(o) && (hp.at.placed || o.at.placed) {
			c.report(hp.at.pod, n.name, ConstraintHostPorts, "host port %d/%s collides with pod %s", hp.port, hp.protocol, podKey(o.at.pod))
			return
		}
	}
}
