//go:build tools

// Package tools pins the Helm command the tests build (helm lint, helm template), so its
// version lives in this go.mod, apart from the local cluster's dependency graph.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
