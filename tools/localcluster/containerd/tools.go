//go:build tools

// Package tools pins the containerd commands a real local node runs (the daemon, its ctr
// client and the runc shim), so their version lives in this go.mod, apart from Kubernetes'.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
