// Certificates of the local cluster's metrics pipeline, made once per state folder with openssl
// (as ./pki.ts does for the control plane): a serving certificate for metrics-server and KWOK's
// emulated kubelet endpoint, signed by the cluster CA, and the aggregation layer's front proxy
// (a CA of its own and the client certificate the API server presents to aggregated APIs, so
// metrics-server can trust the user the API server forwards).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

function signed(
  dir: string,
  name: string,
  subject: string,
  ca: { cert: string; key: string },
  extensions: string[],
): void {
  if (existsSync(join(dir, `${name}.crt`))) return;
  writeFileSync(join(dir, `${name}.ext`), [...extensions, ""].join("\n"));
  openssl(["genrsa", "-out", `${name}.key`, "2048"], dir);
  openssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`], dir);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      ca.cert,
      "-CAkey",
      ca.key,
      "-CAcreateserial",
      "-days",
      "3650",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.crt`,
    ],
    dir,
  );
}

export function ensureMonitoringPki(pki: Pki): MonitoringPki {
  const dir = join(pki.dir, "monitoring");
  mkdirSync(dir, { recursive: true });
  const { name, namespace } = METRICS_SERVER_SERVICE;
  signed(dir, "serving", `/CN=${name}`, { cert: pki.caCert, key: pki.caKey }, [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=serverAuth",
    `subjectAltName=DNS:${name}.${namespace}.svc,DNS:localhost,IP:127.0.0.1`,
  ]);
  if (!existsSync(join(dir, "front-proxy-ca.crt"))) {
    openssl(["genrsa", "-out", "front-proxy-ca.key", "2048"], dir);
    openssl(
      [
        "req",
        "-x509",
        "-new",
        "-key",
        "front-proxy-ca.key",
        "-subj",
        "/CN=onto-local-front-proxy-ca",
        "-days",
        "3650",
        "-out",
        "front-proxy-ca.crt",
      ],
      dir,
    );
  }
  signed(
    dir,
    "front-proxy-client",
    `/CN=${FRONT_PROXY_CLIENT}`,
    { cert: "front-proxy-ca.crt", key: "front-proxy-ca.key" },
    ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature,keyEncipherment", "extendedKeyUsage=clientAuth"],
  );
  return {
    servingCert: join(dir, "serving.crt"),
    servingKey: join(dir, "serving.key"),
    frontProxyCaCert: join(dir, "front-proxy-ca.crt"),
    frontProxyClientCert: join(dir, "front-proxy-client.crt"),
    frontProxyClientKey: join(dir, "front-proxy-client.key"),
  };
}
