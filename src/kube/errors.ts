// Typed API errors: the API server answers failures with a metav1.Status; callers branch on the
// class (NotFoundError, ConflictError, ...) instead of on numbers and strings.

export interface StatusCause {
  field?: string;
  message?: string;
  reason?: string;
}

/** The parts of a metav1.Status that matter to a caller. */
export interface ApiStatus {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: { name?: string; kind?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
}

export class KubeApiError extends Error {
  override name = "KubeApiError";
  constructor(
    message: string,
    /** HTTP status code. */
    readonly code: number,
    /** metav1.Status reason, e.g. NotFound, Conflict, Invalid, Expired. */
    readonly reason: string,
    readonly method: string,
    readonly path: string,
    readonly status: ApiStatus | undefined,
  ) {
    super(message);
  }
}

export class NotFoundError extends KubeApiError {
  override name = "NotFoundError";
}
/** 409: an optimistic-concurrency conflict or a server-side apply field conflict. */
export class ConflictError extends KubeApiError {
  override name = "ConflictError";
}
/** 409 with reason AlreadyExists (a create of an existing name). */
export class AlreadyExistsError extends ConflictError {
  override name = "AlreadyExistsError";
}
/** 422: the object failed validation; `causes` name the fields. */
export class InvalidError extends KubeApiError {
  override name = "InvalidError";
  get causes(): StatusCause[] {
    return this.status?.details?.causes ?? [];
  }
}
export class ForbiddenError extends KubeApiError {
  override name = "ForbiddenError";
}
export class UnauthorizedError extends KubeApiError {
  override name = "UnauthorizedError";
}
/** 410 Gone / reason Expired: the resource version asked for is too old (compacted); relist. */
export class GoneError extends KubeApiError {
  override name = "GoneError";
}
export class TooManyRequestsError extends KubeApiError {
  override name = "TooManyRequestsError";
  get retryAfterSeconds(): number | undefined {
    return this.status?.details?.retryAfterSeconds;
  }
}

/** Builds the typed error for a failed request from its HTTP code and (possibly Status) body. */
export function apiError(code: number, body: unknown, method: string, path: string): KubeApiError {
  const status = isStatus(body) ? body : undefined;
  const reason = status?.reason ?? "";
  const causes = status?.details?.causes ?? [];
  const causeText = causes.length
    ? `: ${causes.map((c) => (c.field ? `${c.field}: ${c.message ?? c.reason ?? ""}` : (c.message ?? ""))).join("; ")}`
    : "";
  const base = status?.message ?? (typeof body === "string" && body ? body.slice(0, 500) : `HTTP ${code}`);
  const message = `${method} ${path}: ${base}${causes.length && !base.includes(causes[0]?.message ?? "\0") ? causeText : ""}`;
  const args = [message, code, reason, method, path, status] as const;
  if (code === 404) return new NotFoundError(...args);
  if (code === 409)
    return reason === "AlreadyExists" ? new AlreadyExistsError(...args) : new ConflictError(...args);
  if (code === 422) return new InvalidError(...args);
  if (code === 403) return new ForbiddenError(...args);
  if (code === 401) return new UnauthorizedError(...args);
  if (code === 410 || reason === "Expired" || reason === "Gone") return new GoneError(...args);
  if (code === 429) return new TooManyRequestsError(...args);
  return new KubeApiError(...args);
}

export function isStatus(body: unknown): body is ApiStatus {
  return typeof body === "object" && body !== null && (body as { kind?: unknown }).kind === "Status";
}

/** The request never got an HTTP answer (connection refused, reset, TLS, timeout). */
export class ConnectionError extends Error {
  override name = "ConnectionError";
  constructor(
    readonly method: string,
    readonly path: string,
    cause: unknown,
  ) {
    super(`${method} ${path}: ${describeCause(cause)}`, { cause });
  }
}

/**
 * The write was not sent: this process may not write now (with leader election: its lease is
 * not known valid). Nothing reached the API server.
 */
export class WriteRefusedError extends Error {
  override name = "WriteRefusedError";
  constructor(
    readonly method: string,
    readonly path: string,
    reason: string,
  ) {
    super(`${method} ${path}: not sent: ${reason}`);
  }
}

/** The server does not serve this apiVersion/kind (CRD missing, API group not enabled). */
export class UnknownResourceError extends Error {
  override name = "UnknownResourceError";
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`the API server serves no kind ${kind} in ${apiVersion}`);
  }
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? ` (${cause.cause.message})` : "";
  return `${cause.message}${inner}`;
}

/**
 * Whether `err` (or an error it was caused by) says the API server was unreachable or failing
 * (no answer, 5xx, 429) rather than anything about the request: retrying later is all there is to
 * do, and it says nothing about the object the request was for.
 */
export function isServerUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ConnectionError) return true;
    if (e instanceof KubeApiError && (e.code >= 500 || e.code === 429)) return true;
  }
  return false;
}
