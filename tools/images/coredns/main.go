// Command coredns is the CoreDNS server of the real nodes' cluster DNS, linked with only the
// plugins the local cluster's Corefile uses (src/localcluster/dns.ts). Upstream's main imports
// every plugin (cloud DNS providers, etcd, ...), which made the cold build several times longer
// for code the cluster never runs; registering plugins by import is CoreDNS's documented way to
// build a server with a chosen set. go.mod pins the Kubernetes client libraries to the versions
// of the control plane's module (tools/localcluster/k8s), so a cold build compiles them once.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// The order in which plugins see a query stays upstream's (core/dnsserver/zdirectives.go): it
// names every plugin, and the ones not linked here are simply never set up.
func main() {
	coremain.Run()
}
