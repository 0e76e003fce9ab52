// Certificates of the local cluster's metrics pipeline, made once per state folder
// (./openssl.ts): a serving certificate for metrics-server and KWOK's emulated kubelet endpoint,
// signed by the cluster CA, and the aggregation layer's front proxy
// (a CA of its own and the client certificate the API server presents to aggregated APIs, so
// metrics-server can trust the user the API server forwards).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ensureCa, ensureSigned, leafExtensions } from "./openssl.js";
import type { Pki } from "./pki.js";

/** The Service name the aggregator verifies metrics-server's certificate against (name.namespace.svc). */
export const METRICS_SERVER_SERVICE = { name: "metrics-server", namespace: "kube-system" } as const;
/** The common name of the front proxy's client certificate (the API server's --requestheader-allowed-names). */
export const FRONT_PROXY_CLIENT = "front-proxy-client";

export interface MonitoringPki {
  servingCert: string;
  servingKey: string;
  frontProxyCaCert: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
}

export function ensureMonitoringPki(pki: Pki): MonitoringPki {
  const dir = join(pki.dir, "monitoring");
  mkdirSync(dir, { recursive: true });
  const { name, namespace } = METRICS_SERVER_SERVICE;
  const clusterCa = { cert: pki.caCert, key: pki.caKey };
  ensureSigned(
    dir,
    "serving",
    `/CN=${name}`,
    clusterCa,
    leafExtensions("serverAuth", [`DNS:${name}.${namespace}.svc`, "DNS:localhost", "IP:127.0.0.1"]),
  );
  const frontProxyCa = ensureCa(dir, "front-proxy-ca", "onto-local-front-proxy-ca");
  ensureSigned(
    dir,
    "front-proxy-client",
    `/CN=${FRONT_PROXY_CLIENT}`,
    frontProxyCa,
    leafExtensions("clientAuth"),
  );
  return {
    servingCert: join(dir, "serving.crt"),
    servingKey: join(dir, "serving.key"),
    frontProxyCaCert: join(dir, "front-proxy-ca.crt"),
    frontProxyClientCert: join(dir, "front-proxy-client.crt"),
    frontProxyClientKey: join(dir, "front-proxy-client.key"),
  };
}
