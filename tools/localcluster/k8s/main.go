// Command onto-k8s is one multi-call binary holding the Kubernetes components the local
// cluster needs: the control plane, and the kubelet and kube-proxy of its real nodes. It
// dispatches on the name it was invoked as (symlinks: kube-apiserver, kube-controller-manager,
// kube-scheduler, kubelet, kube-proxy, kubectl, etcd) or on its first argument, so the large
// Kubernetes dependency graph links once.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	_ "time/tzdata" // CronJob time zones, as upstream's binaries include

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

var commands = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-proxy":              proxy.NewProxyCommand,
}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args
	if _, known := commands[name]; !known && name != "kubectl" && name != "etcd" {
		if len(os.Args) < 2 {
			fmt.Fprintln(os.Stderr, "usage: onto-k8s {kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|kubectl|etcd} [flags]")
			os.Exit(2)
		}
		name = os.Args[1]
		args = append([]string{name}, os.Args[2:]...)
	}
	os.Args = args
	switch name {
	case "etcd":
		etcdmain.Main(os.Args)
		return
	case "kubectl":
		logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) // nolint:errcheck
		command := kubectlcmd.NewDefaultKubectlCommand()
		if err := cli.RunNoErrOutput(command); err != nil {
			kubectlutil.CheckErr(err)
		}
		return
	}
	newCommand, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "onto-k8s: unknown component %q (want one of kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl, etcd)\n", strings.TrimSpace(name))
		os.Exit(2)
	}
	os.Exit(cli.Run(newCommand()))
}
