//go:build tools

// Package tools pins the MinIO client (mc) of the locally built MinIO image, so its version lives in this go.mod, apart from every other
// module the project builds.
package tools

import _ "github.com/minio/mc"
