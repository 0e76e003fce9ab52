// How the platform's own connections use the platform certificate (global.tlsEnabled with
// global.tlsSecretName): where it is mounted, which files a program reads, and the scheme a client
// is told to use. One place, so a server and its clients cannot disagree on whether a link is TLS.
import type { RenderContext } from "./context.js";
import { MINIO } from "./endpoints.js";

/** Where a platform service finds the certificate (tls.crt, tls.key, ca.crt). */
export const TLS_DIR = "/etc/onto/tls";

/** The keys of a kubernetes.io/tls Secret; ca.crt is what clients verify against. */
export const TLS_KEYS = { cert: "tls.crt", key: "tls.key", ca: "ca.crt" } as const;

/** The platform certificate's Secret when the platform's own links use TLS; undefined: plaintext. */
export function platformTlsSecret(ctx: RenderContext): string | undefined {
  return ctx.spec.global.tlsEnabled ? ctx.spec.global.tlsSecretName : undefined;
}

export function httpScheme(ctx: RenderContext): "http" | "https" {
  return platformTlsSecret(ctx) ? "https" : "http";
}

/** The env a client of the platform's TLS links reads: the CA to verify servers against. */
export function clientTrustEnv(ctx: RenderContext): Record<string, string> {
  return platformTlsSecret(ctx) ? { TLS_CA_FILE: `${TLS_DIR}/${TLS_KEYS.ca}` } : {};
}

/** The MinIO URL a client is given (its S3 endpoint). */
export function minioUrl(ctx: RenderContext): string {
  return `${httpScheme(ctx)}://${MINIO.service}:${MINIO.port}`;
}
