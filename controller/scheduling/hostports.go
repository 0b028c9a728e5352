package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// HostPort is one host port a pod binds.
type HostPort struct {
	IP       string
	Protocol corev1.Protocol
	Port     int32
}

// PodHostPorts lists the host ports a pod's containers (and init containers) bind.
func PodHostPorts(pod *corev1.Pod) []HostPort {
	var out []HostPort
	add := func(cs []corev1.Container) {
		for i := range cs {
			for _, p := range cs[i].Ports {
				if p.HostPort == 0 {
					continue
				}
				hp := HostPort{IP: p.HostIP, Protocol: p.Protocol, Port: p.HostPort}
				if hp.IP == "" {
					hp.IP = "0.0.0.0"
				}
				if hp.Protocol == "" {
					hp.Protocol = corev1.ProtocolTCP
				}
				out = append(out, hp)
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	return out
}

// Conflicts reports whether two host ports collide: same protocol and port, and the
// same address or either one the wildcard 0.0.0.0.
func (h HostPort) Conflicts(o HostPort) bool {
	if h.Port != o.Port || h.Protocol != o.Protocol {
		return false
	}
	return h.IP == o.IP || h.IP == "0.0.0.0" || o.IP == "0.0.0.0"
}

// String renders the port as ip:port/protocol.
func (h HostPort) String() string { return fmt.Sprintf("%s:%d/%s", h.IP, h.Port, h.Protocol) }

// HostPortUsage tracks the host ports in use on one node.
type HostPortUsage struct {
	used []HostPort
}

// Conflict returns the first port of ports already in use, if any.
func (u *HostPortUsage) Conflict(ports []HostPort) (HostPort, bool) {
	for _, p := range ports {
		for _, q := range u.used {
			if p.Conflicts(q) {
				return p, true
			}
		}
	}
	return HostPort{}, false
}

// Add records ports as used.
func (u *HostPortUsage) Add(ports []HostPort) { u.used = append(u.used, ports...) }

// Copy returns an independent copy.
func (u *HostPortUsage) Copy() *HostPortUsage {
	return &HostPortUsage{used: append([]HostPort(nil), u.used...)}
}
