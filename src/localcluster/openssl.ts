// X.509 for the local cluster, made with the openssl command line: Node's crypto can parse
// certificates but not issue them, and the local cluster needs only a CA and certificates it
// signs, made once per state folder. One file per certificate: `<name>.key`, `<name>.crt` and the
// `<name>.ext` extensions it was signed with (a certificate is made again when they change).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A CA by its files (paths relative to the folder of the certificates it signs, or absolute). */
export interface CertificateAuthority {
  cert: string;
  key: string;
}

const VALID_DAYS = "3650";

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

/** A self-signed CA `<name>.crt`/`<name>.key` in `dir`, made if missing. */
export function ensureCa(dir: string, name: string, commonName: string): CertificateAuthority {
  const ca = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  if (existsSync(ca.cert)) return ca;
  openssl(["genrsa", "-out", `${name}.key`, "2048"], dir);
  openssl(
    [
      "req",
      "-x509",
      "-new",
      "-key",
      `${name}.key`,
      "-subj",
      `/CN=${commonName}`,
      "-days",
      VALID_DAYS,
      "-out",
      `${name}.crt`,
    ],
    dir,
  );
  return ca;
}

/** Extensions of a leaf certificate for a server (`serverAuth`) or a client (`clientAuth`). */
export function leafExtensions(usage: "serverAuth" | "clientAuth", subjectAltNames: string[] = []): string[] {
  return [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    `extendedKeyUsage=${usage}`,
    ...(subjectAltNames.length > 0 ? [`subjectAltName=${subjectAltNames.join(",")}`] : []),
  ];
}

/**
 * `<name>.crt`/`<name>.key` in `dir`, signed by `ca` with `extensions`. Kept when it exists and
 * was signed with the same extensions, else made again (`keep: true`: kept whatever they were,
 * for a caller that does not know them, e.g. a status query).
 */
export function ensureSigned(
  dir: string,
  name: string,
  subject: string,
  ca: CertificateAuthority,
  extensions: string[],
  opts: { keep?: boolean } = {},
): { cert: string; key: string } {
  const out = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const extPath = join(dir, `${name}.ext`);
  const ext = extensions.join("\n") + "\n";
  const current = existsSync(out.cert) && existsSync(extPath);
  if (current && (opts.keep || readFileSync(extPath, "utf8") === ext)) return out;
  writeFileSync(extPath, ext);
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
      VALID_DAYS,
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.crt`,
    ],
    dir,
  );
  return out;
}
