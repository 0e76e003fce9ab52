// Certificates and credentials of the local control plane: a CA, the API server's serving
// certificate (signed by openssl, because Node's crypto can parse but not issue X.509
// certificates), the service-account signing key pair, and static bearer tokens for the
// admin and for each component. Made once per state folder and reused by later starts.
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
  tokenFile: string;
  tokens: Record<Identity, string>;
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

function readTokens(dir: string): Record<Identity, string> {
  const tokens = {} as Record<Identity, string>;
  for (const id of Object.keys(IDENTITIES) as Identity[]) {
    const path = join(dir, `${id}.token`);
    if (!existsSync(path)) writeFileSync(path, randomBytes(24).toString("hex"), { mode: 0o600 });
    tokens[id] = readFileSync(path, "utf8").trim();
  }
  return tokens;
}

export function ensurePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pki: Omit<Pki, "tokens"> = {
    dir,
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    serverCert: join(dir, "apiserver.crt"),
    serverKey: join(dir, "apiserver.key"),
    saPublicKey: join(dir, "sa.pub"),
    saPrivateKey: join(dir, "sa.key"),
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
  if (!existsSync(pki.serverCert)) {
    const ext = join(dir, "apiserver.ext");
    writeFileSync(
      ext,
      [
        "basicConstraints=CA:FALSE",
        "keyUsage=digitalSignature,keyEncipherment",
        "extendedKeyUsage=serverAuth",
        "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local",
        "",
      ].join("\n"),
    );
    openssl(["genrsa", "-out", "apiserver.key", "2048"], dir);
    openssl(
      ["req", "-new", "-key", "apiserver.key", "-subj", "/CN=kube-apiserver", "-out", "apiserver.csr"],
      dir,
    );
    openssl(
      [
        "x509",
        "-req",
        "-in",
        "apiserver.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "3650",
        "-extfile",
        ext,
        "-out",
        "apiserver.crt",
      ],
      dir,
    );
  }
  if (!existsSync(pki.saPrivateKey)) {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    writeFileSync(pki.saPrivateKey, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    writeFileSync(pki.saPublicKey, publicKey.export({ type: "spki", format: "pem" }));
  }
  const tokens = readTokens(dir);
  const lines = (Object.keys(IDENTITIES) as Identity[]).map((id) => {
    const { user, groups } = IDENTITIES[id];
    return `${tokens[id]},${user},${user}${groups.length ? `,"${groups.join(",")}"` : ""}`;
  });
  writeFileSync(pki.tokenFile, lines.join("\n") + "\n", { mode: 0o600 });
  return { ...pki, tokens };
}
