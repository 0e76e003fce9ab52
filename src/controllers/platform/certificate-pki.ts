// X.509 for the platform's certificates: a per-platform CA, leaf certificates it signs, and what
// the operator reads back from a stored certificate (validity, names, whether the key matches).
// Keys are ECDSA P-256 made by Node's own crypto (WebCrypto); the certificates are built and parsed
// by @peculiar/x509, a maintained TypeScript library over @peculiar/asn1-schema that uses that
// same WebCrypto provider, so no key material passes through a pure-JavaScript big-number
// implementation (node-forge's RSA is both slower and outside Node's crypto). Every client the
// platform runs (libpq, Redis 7, MinIO, Go and Node TLS) accepts P-256.
// @peculiar/x509 resolves its ASN.1 parsers through tsyringe, which needs the Reflect metadata API.
import "reflect-metadata";
import {
  X509Certificate as NodeX509,
  createPrivateKey,
  createPublicKey,
  randomBytes,
  webcrypto,
} from "node:crypto";
import * as x509 from "@peculiar/x509";

// Node's WebCrypto; the DOM lib's Crypto type is not in this project's lib set, hence the cast.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
/** Backdated so a node whose clock is slightly behind the operator's still accepts a fresh certificate. */
export const CLOCK_SKEW_MS = 60_000;

/** A certificate and its private key, PEM encoded (the tls.crt and tls.key of a Secret). */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

/** What the operator reads from a stored certificate. */
export interface CertificateFacts {
  notBefore: Date;
  notAfter: Date;
  dnsNames: string[];
  serial: string;
  /** SHA-256 fingerprint of the DER certificate, hex. */
  fingerprint: string;
  isCa: boolean;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", key));
  return x509.PemConverter.encode(der, "PRIVATE KEY") + "\n";
}

/** A positive 128-bit serial number, hex (RFC 5280 4.1.2.2: at most 20 octets, positive). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
}

function validity(now: Date, lifetimeMs: number): { notBefore: Date; notAfter: Date } {
  return {
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(now.getTime() + lifetimeMs),
  };
}

/** A self-signed CA certificate that may sign leaf certificates only (path length 0). */
export async function issueCa(commonName: string, now: Date, lifetimeMs: number): Promise<KeyPair> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [commonName] }],
    ...validity(now, lifetimeMs),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString("pem") + "\n", keyPem: await keyPem(keys.privateKey) };
}

/** A server and client certificate for `dnsNames` (the first is the subject's CN), signed by `ca`. */
export async function issueLeaf(
  ca: KeyPair,
  dnsNames: readonly string[],
  now: Date,
  lifetimeMs: number,
): Promise<KeyPair> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey(
    "pkcs8",
    createPrivateKey(ca.keyPem).export({ format: "der", type: "pkcs8" }),
    ALGORITHM,
    false,
    ["sign"],
  );
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [dnsNames[0] ?? "onto"] }],
    issuer: caCert.subjectName,
    ...validity(now, lifetimeMs),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      // Server and client: Postgres replication and Redis replicas authenticate as TLS clients.
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension(dnsNames.map((value) => ({ type: "dns" as const, value }))),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { certPem: cert.toString("pem") + "\n", keyPem: await keyPem(keys.privateKey) };
}

/** The first certificate of a PEM bundle, read; throws when it is not a certificate. */
export function readCertificate(pem: string): CertificateFacts {
  const cert = new NodeX509(pem);
  const dnsNames = (cert.subjectAltName ?? "")
    .split(", ")
    .filter((entry) => entry.startsWith("DNS:"))
    .map((entry) => entry.slice("DNS:".length));
  return {
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    dnsNames,
    serial: cert.serialNumber.toLowerCase(),
    fingerprint: cert.fingerprint256.replace(/:/g, "").toLowerCase(),
    isCa: cert.ca,
  };
}

/** Whether `keyPem` is the private key of the first certificate of `certPem`. */
export function keyMatches(certPem: string, keyPem: string): boolean {
  const fromCert = new NodeX509(certPem).publicKey.export({ format: "der", type: "spki" });
  const fromKey = createPublicKey(createPrivateKey(keyPem)).export({ format: "der", type: "spki" });
  return Buffer.compare(fromCert, fromKey) === 0;
}

/** Whether the first certificate of `certPem` was signed by the CA certificate `caPem`. */
export function signedBy(certPem: string, caPem: string): boolean {
  return new NodeX509(certPem).verify(new NodeX509(caPem).publicKey);
}
