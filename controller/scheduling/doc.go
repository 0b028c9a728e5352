// Package scheduling is the vocabulary of Stowage's scheduling core: label
// requirements, resources, taints and host ports. It is pure: no clients, no clocks,
// no map-order effects on any result.
package scheduling
