//go:build tools

// Package tools pins the CNI plugins a real local node uses for pod networking (bridge,
// host-local IPAM, loopback, portmap for hostPort), so their version lives in this go.mod.
package tools

import (
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
