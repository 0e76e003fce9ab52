import { describe, expect, it } from "vitest";
import {
  dependenciesOf,
  diagnoseCrashLoop,
  diagnoseNotStarting,
  lastWords,
  notStarting,
  type DiagnosisLookups,
} from "./crashloop.js";
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

describe("lastWords", () => {
  it("keeps the last lines of a log tail, latest last, within 256 characters", () => {
    const tail = [
      "LOG:  starting",
      "",
      'PANIC:  could not open file "global/pg_control"',
      "LOG:  shut down",
    ].join("\n");
    expect(lastWords(tail)).toBe(
      'LOG:  starting | PANIC:  could not open file "global/pg_control" | LOG:  shut down',
    );
    const long = `${"a".repeat(300)}\nlast line`;
    expect(lastWords(long)).toBe("last line");
    expect(lastWords("x".repeat(300))).toHaveLength(256);
  });
});

describe("a pod the kubelet cannot start", () => {
  function waiting(reason: string, message?: string): PodView {
    const p = pod();
    return {
      ...p,
      status: {
        containerStatuses: [
          { name: "ontology-service", state: { waiting: { reason, ...(message ? { message } : {}) } } },
        ],
      },
    };
  }

  it("names a missing volume Secret while the pod is in ContainerCreating", () => {
    const p = waiting("ContainerCreating");
    const [status] = notStarting(p);
    expect(status).toBeDefined();
    const d = diagnoseNotStarting(p, status!, lookups({ secretExists: (n) => n !== "onto-tls" }));
    expect(d?.reason).toBe("MissingSecret");
    expect(d?.message).toContain(
      "cannot start, ContainerCreating: it references Secret onto-tls (volume tls)",
    );
  });

  it("quotes the kubelet for a missing env Secret (CreateContainerConfigError)", () => {
    const p = waiting("CreateContainerConfigError", 'secret "postgres-credentials" not found');
    const d = diagnoseNotStarting(
      p,
      notStarting(p)[0]!,
      lookups({ secretExists: (n) => n !== "postgres-credentials" }),
    );
    expect(d?.message).toContain('(kubelet: secret "postgres-credentials" not found)');
    expect(d?.message).toContain("Secret postgres-credentials (env DATABASE_PASSWORD)");
  });

  it("says nothing while every reference exists (a pod is in ContainerCreating on every start)", () => {
    const p = waiting("ContainerCreating");
    expect(diagnoseNotStarting(p, notStarting(p)[0]!, lookups())).toBeUndefined();
    expect(notStarting(pod())).toEqual([]);
  });
});
