//go:build tools

// Package tools pins the CoreDNS server of the real nodes' cluster DNS image, so its version lives in this go.mod, apart from every other
// module the project builds.
package tools

import _ "github.com/coredns/coredns"
