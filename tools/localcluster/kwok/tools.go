//go:build tools

// Package tools pins the KWOK command the local cluster builds, so its version
// lives in this go.mod (kept apart from Kubernetes' own dependency graph).
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
