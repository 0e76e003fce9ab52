// The operator's two HTTP endpoints: /metrics (Prometheus text) on one port, /healthz and /readyz
// on another, so probes and scrapes can be exposed and secured separately.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface Check {
  /** null when fine, else the reason shown in the probe's body. */
  (): string | null;
}

export interface RunningServer {
  server: Server;
  /** "host:port" actually bound (useful with port 0). */
  address: string;
  close(): Promise<void>;
}

async function listen(server: Server, port: number, host: string): Promise<RunningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  return {
    server,
    address: `${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function serveMetrics(registry: Registry, port: number, host = "0.0.0.0"): Promise<RunningServer> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
      res.writeHead(404).end("not found\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "Content-Type": registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500).end(`${err instanceof Error ? err.message : String(err)}\n`),
    );
  });
  return listen(server, port, host);
}

export function serveHealth(
  checks: { healthz: Check; readyz: Check },
  port: number,
  host = "0.0.0.0",
): Promise<RunningServer> {
  const server = createServer((req, res) => {
    const path = req.url?.split("?")[0];
    const check = path === "/healthz" ? checks.healthz : path === "/readyz" ? checks.readyz : undefined;
    if (req.method !== "GET" || !check) {
      res.writeHead(404).end("not found\n");
      return;
    }
    const problem = check();
    res
      .writeHead(problem === null ? 200 : 503, { "Content-Type": "text/plain" })
      .end(problem === null ? "ok\n" : `${problem}\n`);
  });
  return listen(server, port, host);
}
