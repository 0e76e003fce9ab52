// What the upgrade cluster tests share: a platform with test-sized upgrade timings, a version
// change, and (re-exported) the audit lines and the test releases whose images fail on purpose.
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import type { KubeClient, KubeObject } from "../../src/kube/index.js";
import { eventually } from "../support/cluster.js";
import { loadSample, readPlatform } from "../support/platform.js";

export { FAULT_RELEASES_FILE, applyFaultReleases } from "./upgrade-releases.js";
export { auditLines, type AuditLine } from "../support/audit.js";

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
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
    template?: { spec?: { containers?: { name: string; image: string }[] } };
  };
  status?: {
    readyReplicas?: number;
    replicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
};

export type Pod = KubeObject & {
  spec?: { containers?: { image: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
};

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
