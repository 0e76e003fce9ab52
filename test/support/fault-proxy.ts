// A TCP relay between a client and the real API server, which a test can cut: while cut, every
// connection is dropped and new ones are refused, as when the API server is down or the network
// between them is gone; restore() lets traffic through again. The API server behind it is the
// real one; the relay changes nothing in the bytes (TLS goes end to end).
import { createServer, connect, type Server, type Socket } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";

export interface FaultProxy {
  /** A kubeconfig file like `kubeconfig`, pointing at the relay. */
  kubeconfigPath: string;
  kubeConfig: k8s.KubeConfig;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultProxy(kubeconfig: string): Promise<FaultProxy> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const target = new URL(kc.getCurrentCluster()!.server);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 443), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
      });
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await listen();
  const cluster = kc.getCurrentCluster()!;
  const proxied = new k8s.KubeConfig();
  proxied.loadFromOptions({
    clusters: [{ ...cluster, server: `https://127.0.0.1:${port}` }],
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
  });
  const dir = mkdtempSync(join(tmpdir(), "onto-fault-proxy-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  writeFileSync(kubeconfigPath, proxied.exportConfig());
  return { kubeconfigPath, kubeConfig: proxied, cut: stop, restore: listen, close: stop };
}
