// Package charttest installs, upgrades and uninstalls charts/stowage with
// helm's Go SDK on the whole-system bed, the controller running as the
// installed Deployment describes (internal/tfbed's Kubelet).
package charttest
