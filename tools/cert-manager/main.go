// Command cert-manager-controller runs cert-manager's own controllers, from its Go module, against
// the cluster a kubeconfig names: the Certificate controllers (trigger, key manager, request
// manager, issuing, readiness, revision manager), the CertificateRequest approver and its CA and
// self-signed signers, and the Issuer and ClusterIssuer controllers. It is what the tests run as
// "cert-manager" on the local cluster.
//
// cert-manager's published controller command lives in a nested module whose go.mod points at the
// repository by a relative replace, so it cannot be built from the module proxy; this program
// builds the same controllers from the main module through its registration table
// (controller.Known). Left out: ACME, Vault and Venafi (they need the internet or a vault), the
// webhook (no validation or conversion: the tests write only v1 objects), the cainjector, the
// ingress and Gateway shims, and leader election (one process).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each package registers its controller with controller.Register in an init function.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// The issuer kinds the Issuer controllers set up (they register with the issuer factory).
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster to run against")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "cert-manager",
		"namespace a ClusterIssuer's Secrets (a CA's key pair) are read from")
	minBackoff := flag.Duration("min-backoff", 10*time.Second,
		"first wait before a failed issuance is tried again")
	maxBackoff := flag.Duration("max-backoff", time.Minute, "longest wait between failed issuances")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "cert-manager-controller: --kubeconfig is required")
		os.Exit(2)
	}

	logf.InitLogs()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "controller")
	log := logf.FromContext(ctx)

	opts := controller.ContextOptions{
		Kubeconfig:         *kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace: *clusterResourceNamespace,
		},
		CertificateOptions: controller.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: *minBackoff,
			CertificateRequestMaximumBackoffDuration: *maxBackoff,
		},
	}
	factory, err := controller.NewContextFactory(ctx, opts)
	if err != nil {
		log.Error(err, "building the controller context")
		os.Exit(1)
	}

	names := make([]string, 0, len(controller.Known()))
	for name := range controller.Known() {
		names = append(names, name)
	}
	sort.Strings(names)
	// Every constructor first, so each registers the informers it needs before they start.
	started := make([]controller.Interface, 0, len(names))
	for _, name := range names {
		iface, err := controller.Known()[name](factory)
		if err != nil {
			log.Error(err, "constructing a controller", "controller", name)
			os.Exit(1)
		}
		started = append(started, iface)
	}
	// The informer factories are shared by every Context the factory builds.
	shared, err := factory.Build()
	if err != nil {
		log.Error(err, "building the shared context")
		os.Exit(1)
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	log.Info("controllers starting", "controllers", names)

	var wg sync.WaitGroup
	for i, iface := range started {
		wg.Add(1)
		go func(name string, iface controller.Interface) {
			defer wg.Done()
			if err := iface.Run(2, ctx); err != nil {
				log.Error(err, "controller stopped", "controller", name)
				stop()
			}
		}(names[i], iface)
	}
	wg.Wait()
	log.Info("controllers stopped")
}
