import { describe, expect, it } from "vitest";
import { diagnoseCrashLoop, dependenciesOf, type DiagnosisLookups } from "./crashloop.js";
import type { PodView } from "../shared/kube-views.js";

function pod(): PodView {
  return {
    metadata: { name: "ontology-service-abc", namespace: "ns" },
    spec: {
      containers: [
        {
          name: "ontology-service",
          envFrom: [{ configMapRef: { name: "ontology-service-config" } }],
          env: [
            {
              name: "DATABASE_PASSWORD",
              valueFrom: { secretKeyRef: { name: "postgres-credentials", key: "password" } },
            },
          ],
        },
      ],
      volumes: [{ name: "tls", secret: { secretName: "onto-tls" } }],
    },
    status: {
      containerStatuses: [
        {
          name: "ontology-service",
          state: { waiting: { reason: "CrashLoopBackOff" } },
          lastState: { terminated: { exitCode: 3, reason: "Error", message: "cannot load certificate" } },
        },
      ],
    },
  };
}

const lookups = (over: Partial<DiagnosisLookups> = {}): DiagnosisLookups => ({
  secretExists: () => true,
  configMapExists: () => true,
  configMapKeys: () => ["DATABASE_HOST", "KAFKA_BOOTSTRAP_SERVERS", "REDIS_MODE", "LOG_LEVEL"],
  dependencyProblem: () => undefined,
  ...over,
});

describe("diagnoseCrashLoop", () => {
  const status = pod().status?.containerStatuses?.[0];
  if (!status) throw new Error("fixture");

  it("names a missing Secret and where the pod references it, with the exit code and message", () => {
    const d = diagnoseCrashLoop(
      pod(),
      "ontology-service",
      status,
      lookups({ secretExists: (n) => n !== "onto-tls" }),
    );
    expect(d.reason).toBe("MissingSecret");
    expect(d.message).toContain("Secret onto-tls (volume tls)");
    expect(d.message).toContain("exit code 3");
    expect(d.message).toContain('message "cannot load certificate"');
    expect(d.exitCode).toBe(3);
  });

  it("names a missing ConfigMap", () => {
    const d = diagnoseCrashLoop(pod(), "ontology-service", status, lookups({ configMapExists: () => false }));
    expect(d).toMatchObject({ reason: "MissingConfigMap" });
    expect(d.message).toContain("ConfigMap ontology-service-config (envFrom)");
  });

  it("names the dependencies that are not Ready", () => {
    const d = diagnoseCrashLoop(
      pod(),
      "ontology-service",
      status,
      lookups({ dependencyProblem: (c) => (c === "kafka" ? "0/3 pods ready" : undefined) }),
    );
    expect(d.reason).toBe("DependencyNotReady");
    expect(d.message).toContain("kafka (0/3 pods ready)");
  });

  it("falls back to the exit code and termination message", () => {
    expect(diagnoseCrashLoop(pod(), "ontology-service", status, lookups()).reason).toBe("ContainerExited");
  });

  it("reads dependencies from credentials and the ConfigMap's endpoint keys", () => {
    const container = pod().spec?.containers?.[0];
    expect(dependenciesOf("ontology-service", container, lookups())).toEqual(["kafka", "postgres", "redis"]);
  });
});
