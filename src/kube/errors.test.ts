import { describe, expect, it } from "vitest";
import {
  AlreadyExistsError,
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidError,
  KubeApiError,
  NotFoundError,
  TooManyRequestsError,
  ConnectionError,
  apiError,
  isServerUnavailable,
} from "./errors.js";

const status = (code: number, reason: string, extra: object = {}): object => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code,
  reason,
  message: `${reason} happened`,
  ...extra,
});

describe("apiError", () => {
  it("maps a metav1.Status to the matching error class", () => {
    expect(apiError(404, status(404, "NotFound"), "GET", "/x")).toBeInstanceOf(NotFoundError);
    expect(apiError(409, status(409, "Conflict"), "PUT", "/x")).toBeInstanceOf(ConflictError);
    const exists = apiError(409, status(409, "AlreadyExists"), "POST", "/x");
    expect(exists).toBeInstanceOf(AlreadyExistsError);
    expect(exists).toBeInstanceOf(ConflictError);
    expect(apiError(403, status(403, "Forbidden"), "GET", "/x")).toBeInstanceOf(ForbiddenError);
    expect(apiError(410, status(410, "Expired"), "GET", "/x")).toBeInstanceOf(GoneError);
    expect(apiError(500, status(410, "Expired"), "WATCH", "/x")).toBeInstanceOf(GoneError);
    const slow = apiError(
      429,
      status(429, "TooManyRequests", { details: { retryAfterSeconds: 3 } }),
      "GET",
      "/x",
    );
    expect(slow).toBeInstanceOf(TooManyRequestsError);
    expect((slow as TooManyRequestsError).retryAfterSeconds).toBe(3);
    const other = apiError(500, "boom", "GET", "/x");
    expect(other).toBeInstanceOf(KubeApiError);
    expect(other.message).toBe("GET /x: boom");
  });

  it("an invalid object names its fields", () => {
    const err = apiError(
      422,
      status(422, "Invalid", {
        message: 'Deployment.apps "d" is invalid',
        details: {
          causes: [{ field: "spec.replicas", message: "must be >= 0", reason: "FieldValueInvalid" }],
        },
      }),
      "PATCH",
      "/apis/apps/v1/namespaces/n/deployments/d",
    );
    expect(err).toBeInstanceOf(InvalidError);
    expect((err as InvalidError).causes).toEqual([
      { field: "spec.replicas", message: "must be >= 0", reason: "FieldValueInvalid" },
    ]);
    expect(err.message).toContain("spec.replicas: must be >= 0");
    expect(err.code).toBe(422);
    expect(err.reason).toBe("Invalid");
  });
});

describe("isServerUnavailable", () => {
  it("is true for no answer, 5xx and 429, also as the cause of another error, and false otherwise", () => {
    const refused = new ConnectionError("GET", "/api", new Error("connect ECONNREFUSED"));
    expect(isServerUnavailable(refused)).toBe(true);
    expect(isServerUnavailable(apiError(503, status(503, "ServiceUnavailable"), "GET", "/x"))).toBe(true);
    expect(isServerUnavailable(apiError(429, status(429, "TooManyRequests"), "GET", "/x"))).toBe(true);
    expect(isServerUnavailable(new Error("apply failed for 3 object(s)", { cause: refused }))).toBe(true);
    expect(isServerUnavailable(apiError(422, status(422, "Invalid"), "PATCH", "/x"))).toBe(false);
    expect(isServerUnavailable(new Error("render failed"))).toBe(false);
    expect(isServerUnavailable("a string")).toBe(false);
  });
});
