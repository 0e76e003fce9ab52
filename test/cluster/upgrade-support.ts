// Helpers for the upgrade cluster tests: a platform with test-sized upgrade timings, the audit
// lines the operator wrote, and (re-exported) applying the test releases whose images fail on purpose.
import { readFileSync } from "node:fs";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import type { KubeClient, KubeObject } from "../../src/kube/index.js";
import { eventually } from "../support/cluster.js";
import { loadSample, readPlatform } from "../support/platform.js";

export { FAULT_RELEASES_FILE, applyFaultReleases } from "./upgrade-releases.js";

export interface AuditLine {
  time: string;
  actor: string;
  verb: string;
  reason: string;
  message: string;
  object: { kind: string; name: string };
}

export function auditLines(file: string | string[]): AuditLine[] {
  const files = Array.isArray(file) ? file : [file];
  return files
    .flatMap((f) => {
      try {
        return readFileSync(f, "utf8").split("\n");
      } catch {
        return [];
      }
    })
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as AuditLine)
    .sort((a, b) => a.time.localeCompare(b.time));
}

/** A sample with upgrade timings small enough for a test. */
export function upgradeSample(
  file: string,
  namespace: string,
  strategy: Record<string, unknown> = {},
): OntoPlatform {
  const platform = loadSample(file, namespace);
  (platform.spec as Record<string, unknown>).upgradeStrategy = {
    soakSeconds: 1,
    healthTimeoutSeconds: 30,
    ...strategy,
  };
  return platform;
}

export async function setVersion(
  client: KubeClient,
  namespace: string,
  name: string,
  version: string,
): Promise<void> {
  await client.mergePatch({ ...PLATFORM_REF, namespace, name }, { spec: { version } });
}

export type Workload = KubeObject & {
  spec?: {
    replicas?: number;
    updateStrategy?: { rollingUpdate?: { partition?: number } };
    template?: { spec?: { containers?: { name: string; image: string }[] } };
  };
  status?: { readyReplicas?: number; replicas?: number; updatedReplicas?: number };
};

export type Pod = KubeObject & {
  spec?: { containers?: { image: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
};

export function isReadyPod(p: Pod): boolean {
  return p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** Waits until the upgrade to `to` has ended (Failed or Succeeded) and the platform is Running again. */
export async function waitForUpgradeEnd(
  client: KubeClient,
  ns: string,
  name: string,
  to: string,
  timeoutMs = 120_000,
): Promise<OntoPlatform> {
  return eventually(
    `the upgrade to ${to} to end`,
    async () => {
      const p = await readPlatform(client, ns, name);
      const u = p.status?.upgrade;
      return u?.to === to &&
        (u.phase === "Failed" || u.phase === "Succeeded") &&
        p.status?.phase === "Running"
        ? p
        : undefined;
    },
    timeoutMs,
    250,
  );
}
