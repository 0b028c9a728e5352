package repair

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Repaired counts the NodeClaims deleted because their node stayed unhealthy.
var Repaired = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "nodeclaims", Name: "repaired_total",
	Help: "Number of NodeClaims deleted because their node's Ready condition stayed False or Unknown for the pool's repairAfter, by nodepool and condition status (false, unknown).",
}, []string{"nodepool", "condition"})

// Blocked counts the repairs held back because too many of a pool's nodes were unhealthy.
var Blocked = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "nodeclaims", Name: "repair_blocked_total",
	Help: "Number of times a node's repair was held back because more than 20% of its nodepool's nodes were unhealthy, by nodepool.",
}, []string{"nodepool"})

func init() { crmetrics.Registry.MustRegister(Repaired, Blocked) }

func conditionLabel(c *corev1.NodeCondition) string { return strings.ToLower(string(c.Status)) }
