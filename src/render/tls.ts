// How the platform's own connections use the platform certificate (global.tlsEnabled with
// global.tlsSecretName): where it is mounted, which files a program reads, and the scheme a client
// is told to use. One place, so a server and its clients cannot disagree on whether a link is TLS.
import type { RenderContext } from "./context.js";
import { MINIO } from "./endpoints.js";
import type { Volume } from "./objects.js";

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

/** The pod volume of the platform certificate. 0440: Postgres refuses a key file others may read. */
export function tlsVolume(secretName: string): Volume {
  return { name: TLS_VOLUME, secret: { secretName, defaultMode: 0o440 } };
}

/** Where a container mounts tlsVolume(). */
export const TLS_MOUNT = { name: "tls", mountPath: TLS_DIR, readOnly: true } as const;
const TLS_VOLUME = TLS_MOUNT.name;

/** The path of one file of the mounted certificate. */
export function tlsFile(key: keyof typeof TLS_KEYS): string {
  return `${TLS_DIR}/${TLS_KEYS[key]}`;
}

/** What a Postgres client is told when the link uses TLS: libpq's sslmode (the server's name is
 * checked against the certificate) and the CA to verify against. */
export function postgresClientTlsEnv(ctx: RenderContext): Record<string, string> {
  return platformTlsSecret(ctx)
    ? { DATABASE_SSLMODE: "verify-full", DATABASE_SSLROOTCERT: tlsFile("ca") }
    : {};
}

/** What a Kafka client is told when the link uses TLS: the protocol of every listener (verify with TLS_CA_FILE). */
export function kafkaClientTlsEnv(ctx: RenderContext): Record<string, string> {
  return platformTlsSecret(ctx) ? { KAFKA_SECURITY_PROTOCOL: "SSL" } : {};
}

/** What a Redis client is told when the link uses TLS: Redis and its Sentinels speak only TLS. */
export function redisClientTlsEnv(ctx: RenderContext): Record<string, string> {
  return platformTlsSecret(ctx) ? { REDIS_TLS: "true" } : {};
}
