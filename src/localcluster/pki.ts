// Certificates and credentials of the local control plane: a CA, the API server's serving
// certificate (signed by openssl, because Node's crypto can parse but not issue X.509
// certificates), the API server's client certificate for the kubelets, the service-account
// signing key pair, and static bearer tokens for the admin, each component and each real node.
// Made once per state folder and reused by later starts; the serving certificate is made again
// when the addresses it must name change (the host bridge address of the real nodes).
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  saPublicKey: string;
  saPrivateKey: string;
  /** Client certificate the API server presents to kubelets (group system:masters). */
  kubeletClientCert: string;
  kubeletClientKey: string;
  tokenFile: string;
  tokens: Record<Identity, string> & Record<string, string>;
}

/** A token identity besides the fixed ones: a real node's kubelet or kube-proxy. */
export interface ExtraIdentity {
  user: string;
  groups: readonly string[];
}

export interface PkiOptions {
  /** IP addresses the API server's certificate must name besides 127.0.0.1. */
  serverAddresses?: string[];
  /** Token identities besides IDENTITIES, by file name (e.g. `node-real-1`). */
  extraIdentities?: Record<string, ExtraIdentity>;
}

/** Who talks to the API server, with the user name and groups Kubernetes' default RBAC expects. */
export const IDENTITIES = {
  admin: { user: "onto-admin", groups: ["system:masters"] },
  controllerManager: { user: "system:kube-controller-manager", groups: [] },
  scheduler: { user: "system:kube-scheduler", groups: [] },
  // KWOK plays every kubelet; it patches node and pod status across namespaces.
  kwok: { user: "kwok-controller", groups: ["system:masters"] },
} as const;
export type Identity = keyof typeof IDENTITIES;

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

function readTokens(dir: string, ids: string[]): Record<Identity, string> & Record<string, string> {
  const tokens = {} as Record<Identity, string> & Record<string, string>;
  for (const id of ids) {
    const path = join(dir, `${id}.token`);
    if (!existsSync(path)) writeFileSync(path, randomBytes(24).toString("hex"), { mode: 0o600 });
    tokens[id] = readFileSync(path, "utf8").trim();
  }
  return tokens;
}

function signedCert(dir: string, name: string, subject: string, ext: string[], force: boolean): void {
  if (!force && existsSync(join(dir, `${name}.crt`))) return;
  writeFileSync(join(dir, `${name}.ext`), ext.join("\n") + "\n");
  openssl(["genrsa", "-out", `${name}.key`, "2048"], dir);
  openssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`], dir);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
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

export function ensurePki(dir: string, opts: PkiOptions = {}): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pki: Omit<Pki, "tokens"> = {
    dir,
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    serverCert: join(dir, "apiserver.crt"),
    serverKey: join(dir, "apiserver.key"),
    saPublicKey: join(dir, "sa.pub"),
    saPrivateKey: join(dir, "sa.key"),
    kubeletClientCert: join(dir, "apiserver-kubelet-client.crt"),
    kubeletClientKey: join(dir, "apiserver-kubelet-client.key"),
    tokenFile: join(dir, "tokens.csv"),
  };
  if (!existsSync(pki.caCert)) {
    openssl(["genrsa", "-out", "ca.key", "2048"], dir);
    openssl(
      [
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-subj",
        "/CN=onto-local-ca",
        "-days",
        "3650",
        "-out",
        "ca.crt",
      ],
      dir,
    );
  }
  const sans = ["IP:127.0.0.1", ...(opts.serverAddresses ?? []).map((ip) => `IP:${ip}`)];
  const serverExt = [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=serverAuth",
    `subjectAltName=${sans.join(",")},IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local`,
  ];
  const extPath = join(dir, "apiserver.ext");
  // Without addresses (a status query, a restart), the certificate the cluster started with stays.
  const stale =
    !existsSync(extPath) ||
    (opts.serverAddresses !== undefined && readFileSync(extPath, "utf8") !== serverExt.join("\n") + "\n");
  signedCert(dir, "apiserver", "/CN=kube-apiserver", serverExt, stale);
  signedCert(
    dir,
    "apiserver-kubelet-client",
    "/O=system:masters/CN=kube-apiserver-kubelet-client",
    ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature,keyEncipherment", "extendedKeyUsage=clientAuth"],
    false,
  );
  if (!existsSync(pki.saPrivateKey)) {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    writeFileSync(pki.saPrivateKey, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    writeFileSync(pki.saPublicKey, publicKey.export({ type: "spki", format: "pem" }));
  }
  // The extra identities are kept beside the tokens, so a later call without them (a status
  // query, an API server restart) writes the same token file.
  const extraPath = join(dir, "extra-identities.json");
  if (opts.extraIdentities) writeFileSync(extraPath, JSON.stringify(opts.extraIdentities, null, 2));
  const extra = existsSync(extraPath)
    ? (JSON.parse(readFileSync(extraPath, "utf8")) as Record<string, ExtraIdentity>)
    : {};
  const identities: Record<string, ExtraIdentity> = { ...IDENTITIES, ...extra };
  const tokens = readTokens(dir, Object.keys(identities));
  const lines = Object.entries(identities).map(([id, { user, groups }]) => {
    return `${tokens[id]},${user},${user}${groups.length ? `,"${groups.join(",")}"` : ""}`;
  });
  writeFileSync(pki.tokenFile, lines.join("\n") + "\n", { mode: 0o600 });
  return { ...pki, tokens };
}
