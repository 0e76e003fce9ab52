// Online volume growth against the real API server and controller-manager, on KWOK nodes: a larger
// `storage` for every stateful component (Postgres, Redis, MinIO, Kafka, Nessie) patches each
// claim's requested size and re-creates the StatefulSets with the larger claim template, keeping
// their pods (uids unchanged, also once every rollout has settled); `onto diff` says beforehand
// that nothing restarts, Postgres included (its max_slot_wal_keep_size, which follows the volume
// size, is in a file its members reload, not in the pod template). On a StorageClass without
// allowVolumeExpansion nothing changes and the platform names the field and the class; a spec
// naming a StorageClass that does not exist is Degraded naming spec.global.storageClass. KWOK
// mounts no volume: what is shown is the API objects (the claim's spec, the StatefulSet, the
// pods), not a file system growing, which needs a real CSI driver.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { PLATFORM_REF, Quantity, REASON, type OntoPlatform } from "../../src/api/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import { auditLines } from "../support/audit.js";
import { eventually, kubeconfigPath } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import { loadSample, readPlatform } from "../support/platform.js";

const NAME = "onto-minimal";
/** A StorageClass of the same provisioner as the cluster's default, without volume expansion. */
const FIXED_CLASS = "onto-test-no-expansion";
const MISSING_CLASS = "onto-test-missing-class";
const STATEFUL = [
  { name: "postgres", path: ["infrastructure", "postgres"] },
  { name: "redis", path: ["infrastructure", "redis"] },
  { name: "minio", path: ["infrastructure", "minio"] },
  { name: "kafka", path: ["infrastructure", "kafka"] },
  { name: "nessie", path: ["dataPlane", "nessie"] },
] as const;

const storageClassRef = (name: string) => ({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", name });
const storageClass = (name: string, allowVolumeExpansion: boolean): KubeObject =>
  ({
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name },
    provisioner: "kubernetes.io/host-path",
    reclaimPolicy: "Delete",
    volumeBindingMode: "Immediate",
    allowVolumeExpansion,
  }) as KubeObject;
const fx = useOperator({
  namespaces: ["volume", "volume-fixed"],
  waitMs: 300_000,
  before: async ({ client }) => {
    await client.apply(storageClass(FIXED_CLASS, false));
  },
  platform: (namespace) => {
    const platform = loadSample("minimal.yaml", namespace);
    if (namespace.includes("fixed")) platform.spec.global = { storageClass: FIXED_CLASS };
    return platform;
  },
  after: async () => {
    for (const name of [FIXED_CLASS, MISSING_CLASS]) await fx.client.delete(storageClassRef(name));
  },
});
const { client, namespaces } = fx;
const [grown = "", fixed = ""] = namespaces;
const dir = mkdtempSync(join(tmpdir(), "onto-volume-"));

type Claim = KubeObject & {
  spec: { storageClassName?: string; resources: { requests: { storage: string } } };
};
type Sts = KubeObject & {
  spec: {
    replicas?: number;
    volumeClaimTemplates?: { spec: { resources: { requests: { storage: string } } } }[];
  };
  status?: { observedGeneration?: number; updateRevision?: string };
};
type Condition = { type: string; status: string; reason?: string; message?: string };

interface State {
  pods: Record<string, string>;
  claims: Record<string, string>;
  claimUids: Record<string, string>;
  statefulSets: Record<string, { uid: string; storage: string }>;
}

async function state(namespace: string): Promise<State> {
  const pods = (await client.list("v1", "Pod", { namespace })).items.filter((p) =>
    STATEFUL.some((s) => p.metadata?.name?.startsWith(`${s.name}-`)),
  );
  const claims = (await client.list<Claim>("v1", "PersistentVolumeClaim", { namespace })).items;
  const statefulSets = (await client.list<Sts>("apps/v1", "StatefulSet", { namespace })).items;
  return {
    pods: Object.fromEntries(pods.map((p) => [p.metadata?.name ?? "", p.metadata?.uid ?? ""])),
    claims: Object.fromEntries(
      claims.map((c) => [c.metadata?.name ?? "", c.spec.resources.requests.storage]),
    ),
    claimUids: Object.fromEntries(claims.map((c) => [c.metadata?.name ?? "", c.metadata?.uid ?? ""])),
    statefulSets: Object.fromEntries(
      statefulSets.map((s) => [
        s.metadata?.name ?? "",
        {
          uid: s.metadata?.uid ?? "",
          storage: s.spec.volumeClaimTemplates?.[0]?.spec.resources.requests.storage ?? "",
        },
      ]),
    ),
  };
}

/** `size` plus one of its unit (20Gi -> 21Gi). */
const plusOne = (size: string) => `${Number.parseInt(size, 10) + 1}${size.replace(/^\d+/, "")}`;
const sameSize = (a: string | undefined, b: string) =>
  a !== undefined && Quantity.parse(a).compareTo(Quantity.parse(b)) === 0;

/** The platform with every stateful component's storage one unit larger than its StatefulSet's. */
async function grownPlatform(namespace: string, before: State): Promise<OntoPlatform> {
  const platform = await readPlatform(client, namespace, NAME);
  const spec = structuredClone(platform.spec) as unknown as Record<
    string,
    Record<string, Record<string, unknown>>
  >;
  for (const s of STATEFUL) {
    const [plane = "", component = ""] = s.path;
    spec[plane] = {
      ...spec[plane],
      [component]: {
        ...spec[plane]?.[component],
        storage: plusOne(before.statefulSets[s.name]?.storage ?? ""),
      },
    };
  }
  return {
    apiVersion: platform.apiVersion,
    kind: platform.kind,
    metadata: { name: NAME, namespace },
    spec: spec as unknown as OntoPlatform["spec"],
  };
}

function diff(platform: OntoPlatform): Promise<{ code: number; stdout: string; stderr: string }> {
  const path = join(dir, `${platform.metadata.namespace}.yaml`);
  writeFileSync(path, stringify(platform));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/onto.js", "diff", "-f", path],
      { env: { ...process.env, KUBECONFIG: kubeconfigPath(), NO_COLOR: "1" }, timeout: 300_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

async function conditionOf(namespace: string, name: string, type: string): Promise<Condition | undefined> {
  const p = await readPlatform(client, namespace, name);
  return (p.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
}

describe("online volume growth", () => {
  it("grows every stateful component's claims and claim template keeping the pods; onto diff says what restarts", async () => {
    const before = await state(grown);
    console.log(`before: claims ${JSON.stringify(before.claims)}; pods ${JSON.stringify(before.pods)}`);
    expect(Object.keys(before.claims).length).toBeGreaterThanOrEqual(STATEFUL.length);
    const platform = await grownPlatform(grown, before);

    const run = await diff(platform);
    console.log(`onto diff (storage +1 on ${STATEFUL.length} components):\n${run.stdout}${run.stderr}`);
    expect(run.code).toBe(1);
    for (const claim of Object.keys(before.claims))
      expect(run.stdout).toContain(`~ PersistentVolumeClaim/${claim}  (grows online`);
    // Growth restarts nothing, Postgres included: its max_slot_wal_keep_size (a quarter of its
    // volume) changes only the file of its ConfigMap that its members reload.
    const restarting = [...run.stdout.matchAll(/StatefulSet\/(\S+) restarts \((\w+)\)/g)].map(
      (m) => `${m[1]}:${m[2]}`,
    );
    expect(restarting).toEqual([]);
    const noRestart = run.stdout.split("\n").find((l) => l.includes("no restart:")) ?? "";
    for (const s of STATEFUL) expect(noRestart).toContain(`StatefulSet/${s.name}`);

    const started = Date.now();
    await client.apply(platform);
    const after = await eventually(
      "claims and StatefulSets grown",
      async () => {
        const now = await state(grown);
        const done = STATEFUL.every((s) => {
          const want = plusOne(before.statefulSets[s.name]?.storage ?? "");
          const sts = now.statefulSets[s.name];
          const claims = Object.keys(before.claims).filter((c) => c.startsWith(`data-${s.name}-`));
          return (
            sts !== undefined &&
            sts.uid !== before.statefulSets[s.name]?.uid &&
            sameSize(sts.storage, want) &&
            claims.every((c) => sameSize(now.claims[c], want))
          );
        });
        return done ? now : undefined;
      },
      180_000,
    );
    console.log(
      `after ${Date.now() - started} ms: claims ${JSON.stringify(after.claims)}; pods ${JSON.stringify(after.pods)}; StatefulSets ${JSON.stringify(after.statefulSets)}`,
    );
    expect(Object.keys(before.pods)).toContain("postgres-0");
    expect(after.pods).toEqual(before.pods);
    expect(after.claimUids).toEqual(before.claimUids);
    const lines = auditLines(fx.operator.auditLog).filter((l) => l.object.namespace === grown);
    const grownClaims = lines.filter((l) => l.reason === "VolumeGrown").map((l) => l.object.name);
    expect(grownClaims.sort()).toEqual(Object.keys(before.claims).sort());
    const recreated = lines.filter((l) => l.reason === "Recreated").map((l) => l.object.name);
    expect(recreated.sort()).toEqual(STATEFUL.map((s) => s.name).sort());
    // Each claim grew before its StatefulSet was re-created.
    for (const s of STATEFUL) {
      const lastGrow = lines
        .filter((l) => l.reason === "VolumeGrown" && l.object.name.startsWith(`data-${s.name}-`))
        .at(-1);
      const recreate = lines.find((l) => l.reason === "Recreated" && l.object.name === s.name);
      expect((lastGrow?.time ?? "") <= (recreate?.time ?? "")).toBe(true);
    }
    await eventually("Running again", async () => {
      const p = await readPlatform(client, grown, NAME);
      return p.status?.phase === "Running" && p.status.observedGeneration === p.metadata.generation
        ? p
        : undefined;
    });
    // A pod-template change would roll the pods only after the re-created StatefulSet adopted them:
    // once every pod runs its StatefulSet's update revision, each is still the one from before.
    await eventually("every pod at its StatefulSet's update revision", async () => {
      const sets = (await client.list<Sts>("apps/v1", "StatefulSet", { namespace: grown })).items;
      const pods = (await client.list("v1", "Pod", { namespace: grown })).items;
      return STATEFUL.every((c) => {
        const sts = sets.find((x) => x.metadata?.name === c.name);
        const revision = sts?.status?.updateRevision;
        const own = pods.filter((p) => new RegExp(`^${c.name}-\\d+$`).test(p.metadata?.name ?? ""));
        return (
          sts !== undefined &&
          revision !== undefined &&
          (sts.status?.observedGeneration ?? 0) >= (sts.metadata?.generation ?? 1) &&
          own.length === (sts.spec.replicas ?? 1) &&
          own.every(
            (p) =>
              !p.metadata?.deletionTimestamp && p.metadata?.labels?.["controller-revision-hash"] === revision,
          )
        );
      })
        ? true
        : undefined;
    });
    const settled = await state(grown);
    console.log(`settled: pods ${JSON.stringify(settled.pods)}`);
    expect(settled.pods).toEqual(before.pods);
  });

  it("a StorageClass without expansion: nothing changes, and a condition names the field and the class", async () => {
    const before = await state(fixed);
    const platform = await grownPlatform(fixed, before);
    await client.apply(platform);
    const degraded = await eventually("VolumeExpansionUnsupported", async () => {
      const c = await conditionOf(fixed, NAME, "Degraded");
      return c?.status === "True" && c.reason === REASON.VolumeExpansionUnsupported ? c : undefined;
    });
    console.log(`Degraded: ${degraded.message}`);
    expect(degraded.message).toContain("spec.infrastructure.postgres.storage");
    expect(degraded.message).toContain(`StorageClass ${FIXED_CLASS}`);
    const after = await state(fixed);
    expect(after).toEqual(before);
    const run = await diff(platform);
    console.log(`onto diff (no expansion):\n${run.stdout}`);
    expect(run.stdout).toContain("spec.infrastructure.postgres.storage: postgres: cannot grow");
    expect(run.stdout).not.toContain("PersistentVolumeClaim/");
  });

  it("a StorageClass that does not exist: Degraded naming spec.global.storageClass, until it is created", async () => {
    const other = "onto-missing-class";
    const platform = loadSample("minimal.yaml", fixed);
    await client.delete({ ...PLATFORM_REF, namespace: fixed, name: NAME });
    await eventually("first platform gone", async () =>
      (await client.getIfExists({ ...PLATFORM_REF, namespace: fixed, name: NAME })) ? undefined : true,
    );
    platform.metadata.name = other;
    platform.spec.global = { storageClass: MISSING_CLASS };
    await client.apply(platform);
    const degraded = await eventually("StorageClassNotFound", async () => {
      const c = await conditionOf(fixed, other, "Degraded");
      return c?.status === "True" && c.reason === REASON.StorageClassNotFound ? c : undefined;
    });
    const phase = (await readPlatform(client, fixed, other)).status?.phase;
    console.log(`phase ${phase}, Degraded: ${degraded.message}`);
    expect(phase).toBe("Degraded");
    expect(degraded.message).toContain(
      `spec.global.storageClass: StorageClass ${MISSING_CLASS} does not exist`,
    );
    await client.apply(storageClass(MISSING_CLASS, true));
    const cleared = await eventually(
      "the condition clears",
      async () => {
        const c = await conditionOf(fixed, other, "Degraded");
        return c?.reason !== REASON.StorageClassNotFound ? c : undefined;
      },
      120_000,
    );
    console.log(`after creating the class: Degraded ${cleared?.status} ${cleared?.reason ?? ""}`);
  });
});
