// `onto diff -f FILE`: what applying FILE's OntoPlatforms would change on the live cluster, like
// `kubectl diff` but through the operator's eyes. For each platform: its spec (a server-side
// dry-run replace, so the API server's defaults and validation apply), then every object the
// operator would render from that spec, each compared with a server-side dry-run apply under the
// operator's field manager, then what the operator would prune. Exit 0: no difference; 1:
// differences; 2: the file or the cluster could not be read.
import { Command, Option } from "commander";
import { summaryOf } from "./catalog.js";
import {
  INSTANCE_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  PLATFORM_REF,
  resolveSpec,
  validateYamlStream,
  type OntoPlatform,
} from "../../api/index.js";
import { ConflictError, FIELD_MANAGER, InvalidError, KubeClient, type KubeObject } from "../../kube/index.js";
import {
  CLAIM_REF,
  FORCE_ANNOTATION,
  IMMUTABLE_STATEFULSET_FIELDS,
  STORAGE_CLASS_REF,
  formatPlan,
  immutableChanges,
  planVolumeGrowth,
  isWorkload,
  namespaceSecurity,
  pathRefusal,
  restartPlan,
  withKeptStorage,
  type RestartEntry,
  type VolumeGrowth,
  type WorkloadObject,
} from "../../controllers/index.js";
import { clusterCatalog } from "../releases.js";
import {
  GENERATED_SECRET_LABEL,
  apiVersionOf,
  servedKinds,
  type RenderedObject,
} from "../../render/index.js";
import { renderForCluster } from "../cluster-render.js";
import { EnvironmentError, connect, withConnectionFlags, type ConnectionFlags } from "../kube.js";
import { readManifest } from "../input.js";
import { diffObjects, formatChange, type FieldChange } from "../object-diff.js";
import { paletteFor, structured, type Palette } from "../output.js";

export type ChangeOp = "add" | "change" | "prune";

export interface ObjectChange {
  op: ChangeOp;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** For "change": the fields that differ (Secret values hidden). */
  fields: FieldChange[];
  /** Something to know about this change, e.g. a Job that is replaced. */
  note?: string;
}

export interface PlatformDiff {
  namespace: string;
  name: string;
  changes: ObjectChange[];
  notes: string[];
  /** For each changed workload: whether its pods restart, why, in what order, under what budget. */
  restarts: RestartEntry[];
}

type Platform = OntoPlatform & KubeObject;

/** The platform as the API server would store it from `doc`: a dry-run replace or create. */
async function platformAfterApply(
  client: KubeClient,
  doc: Platform,
  live: Platform | undefined,
): Promise<Platform> {
  const ref = { ...PLATFORM_REF, namespace: doc.metadata.namespace, name: doc.metadata.name };
  if (live) {
    // The replace carries the live resourceVersion; the operator writing status in between makes
    // it a conflict, so read again and retry (a dry run changes nothing either way).
    let current = live;
    for (let attempt = 1; ; attempt++) {
      const { managedFields: _m, ...metadata } = current.metadata;
      try {
        return (await client.requestJson("PUT", await client.objectPath(ref), {
          body: { ...current, metadata, spec: doc.spec },
          query: { dryRun: "All", fieldManager: client.fieldManager },
        })) as Platform;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= 5) throw err;
        current = await client.get<Platform>(ref);
      }
    }
  }
  const namespace = await client.getIfExists({ apiVersion: "v1", kind: "Namespace", name: ref.namespace });
  if (!namespace) return doc; // nothing to dry-run against; the offline validation already passed
  return (await client.requestJson("POST", await client.collectionPath(ref), {
    body: doc,
    query: { dryRun: "All", fieldManager: client.fieldManager },
  })) as Platform;
}

function change(op: ChangeOp, obj: { apiVersion: string; kind: string; namespace: string; name: string }) {
  return { op, ...obj, fields: [] as FieldChange[] };
}

/**
 * What applying `doc` would change. `client` reads and dry-runs the platform; `operatorClient`
 * dry-runs the children under the operator's field manager, so fields the operator stopped
 * setting show as removed, exactly as its next apply would remove them.
 */
export async function diffPlatform(
  client: KubeClient,
  operatorClient: KubeClient,
  doc: Platform,
): Promise<PlatformDiff> {
  const { namespace, name } = doc.metadata;
  const out: PlatformDiff = { namespace, name, changes: [], notes: [], restarts: [] };
  const live = await client.getIfExists<Platform>({ ...PLATFORM_REF, namespace, name });
  const after = await platformAfterApply(client, doc, live);
  const platformRef = { ...PLATFORM_REF, namespace, name };
  if (!live) out.changes.push(change("add", platformRef));
  else {
    const fields = diffObjects({ spec: live.spec }, { spec: after.spec });
    if (fields.length > 0) out.changes.push({ ...change("change", platformRef), fields });
  }

  if (live && after.spec.paused) {
    out.notes.push("spec.paused is true: the operator would change nothing else");
    return out;
  }
  const inFlight = live?.status?.upgrade;
  if (inFlight && (inFlight.phase === "InProgress" || inFlight.phase === "RollingBack"))
    out.notes.push(
      `an upgrade ${inFlight.from} -> ${inFlight.to} is in flight (${inFlight.phase}${inFlight.component ? `, at ${inFlight.component}` : ""}): workloads it has not reached yet show their end state`,
    );
  const running = live?.status?.version ?? live?.spec.version;
  const forced =
    after.spec.upgradeStrategy?.force === true || after.metadata.annotations?.[FORCE_ANNOTATION] === "true";
  const refused =
    running && running !== after.spec.version
      ? pathRefusal(await clusterCatalog(client), running, after.spec.version, forced)
      : undefined;
  if (live && refused)
    out.notes.push(
      `the operator refuses this version change${refused.forceHelps ? " unless forced" : ""} (${refused.message}): workloads keep their running version until then`,
    );
  else if (live && after.spec.version !== live.spec.version)
    out.notes.push(
      `spec.version ${live.spec.version} -> ${after.spec.version}: the operator gets there by an ordered upgrade, component by component; shown is the end state`,
    );

  // Tenants: the Pod Security labels the operator puts on its namespace (never owned, never pruned).
  const namespaceLabels = live ? namespaceSecurity(namespace, resolveSpec(after.spec)) : undefined;
  if (namespaceLabels) {
    const ref = { apiVersion: "v1", kind: "Namespace", namespace: "", name: namespace };
    const current = await client.getIfExists(ref);
    if (current) {
      const merged = await operatorClient.apply(namespaceLabels, { dryRun: true, force: true });
      const fields = diffObjects(current, merged);
      if (fields.length > 0) out.changes.push({ ...change("change", ref), fields });
    }
  }

  const first = await renderForCluster(client, after, live);
  const { capabilities } = first;
  // Claims the new storage grows, or growth their StorageClass refuses (then the component is
  // rendered at the size it has, as the operator renders it).
  const growth = live ? await volumeGrowth(client, namespace, first.objects) : undefined;
  const objects =
    growth && growth.kept.size > 0
      ? (await renderForCluster(client, { ...after, spec: withKeptStorage(after.spec, growth.kept) }, live))
          .objects
      : first.objects;
  for (const g of growth?.grow ?? [])
    out.changes.push({
      ...change("change", { ...CLAIM_REF, namespace, name: g.claim }),
      fields: [{ path: "spec.resources.requests.storage", from: g.from, to: g.to }],
      note: `grows online, under the running pod of StatefulSet/${g.workload}`,
    });
  for (const p of growth?.problems ?? []) out.notes.push(`${p.field}: ${p.message}`);
  // The restart plan compares each workload as it is with what the API server would store.
  const planned: WorkloadObject[] = [];
  const before = new Map<string, WorkloadObject>();
  for (const obj of objects) {
    const ref = { apiVersion: obj.apiVersion, kind: obj.kind, namespace, name: obj.metadata.name };
    const current = live ? await client.getIfExists(ref) : undefined;
    if (!current) {
      out.changes.push(change("add", ref));
      continue;
    }
    const compared = await compareWithDryRun(operatorClient, obj, current, ref);
    if (compared.change) out.changes.push(compared.change);
    if (obj.kind === "PodDisruptionBudget") planned.push(obj);
    if (isWorkload(obj) && compared.change && compared.merged) {
      planned.push(compared.merged as WorkloadObject);
      before.set(`${obj.kind}/${obj.metadata.name}`, current as WorkloadObject);
    }
  }
  out.restarts = restartPlan({
    desired: planned,
    live: (o) => before.get(`${o.kind}/${o.metadata.name}`),
  });
  if (live) out.changes.push(...(await prunable(client, live, after, objects, servedKinds(capabilities))));
  return out;
}

async function compareWithDryRun(
  operatorClient: KubeClient,
  obj: RenderedObject,
  current: KubeObject,
  ref: { apiVersion: string; kind: string; namespace: string; name: string },
): Promise<{ change?: ObjectChange; merged?: KubeObject }> {
  let merged: KubeObject;
  try {
    merged = await operatorClient.apply(obj, { dryRun: true, force: true });
  } catch (err) {
    // A Job's pod template is immutable: the operator deletes it and creates it again.
    if (obj.kind === "Job" && err instanceof InvalidError)
      return {
        change: {
          ...change("change", ref),
          note: "its pod template is immutable: the operator re-creates it",
        },
      };
    const immutable =
      obj.kind === "StatefulSet" && err instanceof InvalidError ? immutableChanges(obj, current) : [];
    if (immutable.length === 0) throw err;
    return recreatedStatefulSet(operatorClient, obj, current, ref, immutable);
  }
  const fields = diffObjects(current, merged, { secret: obj.kind === "Secret" });
  return fields.length > 0 ? { change: { ...change("change", ref), fields }, merged } : { merged };
}

/**
 * A StatefulSet whose immutable fields change: the operator re-creates it keeping its pods. The
 * rest of the change is dry-run with the live immutable fields (what the API server can compare),
 * so the restart plan sees the pod template it will get; the immutable paths are listed as well.
 */
async function recreatedStatefulSet(
  operatorClient: KubeClient,
  obj: RenderedObject,
  current: KubeObject,
  ref: { apiVersion: string; kind: string; namespace: string; name: string },
  immutable: string[],
): Promise<{ change: ObjectChange; merged: KubeObject }> {
  const liveSpec = (current as { spec?: Record<string, unknown> }).spec ?? {};
  const spec = { ...(obj as { spec?: Record<string, unknown> }).spec };
  for (const field of IMMUTABLE_STATEFULSET_FIELDS)
    if (liveSpec[field] !== undefined) spec[field] = liveSpec[field];
  const merged = await operatorClient.apply(
    { ...obj, spec },
    {
      dryRun: true,
      force: true,
    },
  );
  const fields = [
    ...immutable.map((path) => ({ path, from: valueAt(current, path), to: valueAt(obj, path) })),
    ...diffObjects(current, merged),
  ];
  return {
    change: {
      ...change("change", ref),
      fields,
      note: "immutable fields change: the operator re-creates it keeping its pods (orphan delete, then create)",
    },
    merged,
  };
}

/** The value at a path such as spec.volumeClaimTemplates[0].spec.resources.requests.storage. */
function valueAt(obj: unknown, path: string): unknown {
  let node: unknown = obj;
  for (const step of path.split(/\.|\[|\]/).filter(Boolean)) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}

/** The claim growth the operator would carry out for `rendered` (see planVolumeGrowth). */
async function volumeGrowth(
  client: KubeClient,
  namespace: string,
  rendered: RenderedObject[],
): Promise<VolumeGrowth> {
  const claims = (await client.list(CLAIM_REF.apiVersion, CLAIM_REF.kind, { namespace })).items;
  const classes = (await client.list(STORAGE_CLASS_REF.apiVersion, STORAGE_CLASS_REF.kind)).items;
  const live = new Map<string, KubeObject>();
  for (const obj of rendered.filter((o) => o.kind === "StatefulSet")) {
    const current = await client.getIfExists({
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      namespace,
      name: obj.metadata.name,
    });
    if (current) live.set(obj.metadata.name, current);
  }
  return planVolumeGrowth({
    desired: rendered,
    live: (o) => live.get(o.metadata.name),
    claims,
    storageClass: (name) => classes.find((c) => c.metadata?.name === name),
  });
}

/** What the operator's prune would delete: owned objects the new render no longer has. */
async function prunable(
  client: KubeClient,
  live: Platform,
  after: Platform,
  desired: RenderedObject[],
  kinds: ReturnType<typeof servedKinds>,
): Promise<ObjectChange[]> {
  const { namespace, name } = live.metadata;
  const wanted = new Set(desired.map((o) => `${o.kind}/${o.metadata.name}`));
  const retainSecrets = (after.spec.retentionPolicy?.secrets ?? "Retain") === "Retain";
  const out: ObjectChange[] = [];
  for (const kind of kinds) {
    const apiVersion = apiVersionOf(kind);
    const list = await client.list(apiVersion, kind.kind, {
      namespace,
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${INSTANCE_LABEL}=${name}`,
    });
    for (const obj of list.items) {
      const objName = obj.metadata?.name ?? "";
      if (wanted.has(`${kind.kind}/${objName}`)) continue;
      if (!(obj.metadata?.ownerReferences ?? []).some((r) => r.uid === live.metadata.uid)) continue;
      if (kind.kind === "Secret" && obj.metadata?.labels?.[GENERATED_SECRET_LABEL] && retainSecrets) continue;
      out.push(change("prune", { apiVersion, kind: kind.kind, namespace, name: objName }));
    }
  }
  return out;
}

const SIGN: Record<ChangeOp, string> = { add: "+", change: "~", prune: "-" };

export function formatDiffs(diffs: PlatformDiff[], colors: Palette): string {
  const lines: string[] = [];
  for (const diff of diffs) {
    for (const note of diff.notes) lines.push(colors.dim(`# ${diff.namespace}/${diff.name}: ${note}`));
    for (const c of diff.changes) {
      const color = c.op === "add" ? colors.green : c.op === "prune" ? colors.red : colors.yellow;
      lines.push(color(`${SIGN[c.op]} ${c.kind}/${c.name}${c.note ? `  (${c.note})` : ""}`));
      for (const field of c.fields) for (const line of formatChange(field)) lines.push(`    ${line}`);
    }
    if (diff.restarts.length > 0) {
      lines.push(colors.bold(`restart plan for ${diff.namespace}/${diff.name}:`));
      for (const line of formatPlan(diff.restarts)) lines.push(`  ${line}`);
    }
  }
  const all = diffs.flatMap((d) => d.changes);
  const count = (op: ChangeOp): number => all.filter((c) => c.op === op).length;
  lines.push(
    all.length === 0
      ? "no differences"
      : `${count("add")} to add, ${count("change")} to change, ${count("prune")} to prune`,
  );
  return `${lines.join("\n")}\n`;
}

interface DiffFlags extends ConnectionFlags {
  filename: string;
  output: "text" | "json" | "yaml";
}

export function diffCommand(): Command {
  const command = new Command("diff")
    .description(summaryOf("diff"))
    .requiredOption("-f, --filename <file>", "YAML file of OntoPlatform documents ('-' reads stdin)")
    .addOption(
      new Option("-o, --output <format>", "output format").choices(["text", "json", "yaml"]).default("text"),
    );
  return withConnectionFlags(command).action(async (flags: DiffFlags) => {
    let text: string;
    try {
      text = readManifest(flags.filename);
    } catch (err) {
      throw new EnvironmentError(err instanceof Error ? err.message : String(err));
    }
    const reports = validateYamlStream(text);
    const problems = reports.flatMap((r) =>
      r.issues.map((i) => `${r.name}: ${i.path ? `${i.path}: ` : ""}${i.message}`),
    );
    if (reports.length === 0) problems.push(`${flags.filename}: no OntoPlatform document found`);
    if (problems.length > 0) throw new EnvironmentError(problems.join("\n"));

    const { client, namespace } = connect(flags);
    const operatorClient = new KubeClient(client.kubeConfig, {
      fieldManager: FIELD_MANAGER,
      userAgent: "onto-cli",
    });
    try {
      const diffs: PlatformDiff[] = [];
      for (const report of reports) {
        const doc = structuredClone(report.object) as Platform;
        // As kubectl: -n fills in a missing namespace, and must not contradict the file's.
        if (flags.namespace && doc.metadata.namespace && doc.metadata.namespace !== flags.namespace)
          throw new EnvironmentError(
            `${report.name}: the file says namespace ${doc.metadata.namespace}, -n says ${flags.namespace}`,
          );
        doc.metadata.namespace ??= namespace;
        diffs.push(await diffPlatform(client, operatorClient, doc));
      }
      process.stdout.write(
        flags.output === "text"
          ? formatDiffs(diffs, paletteFor(process.stdout))
          : structured({ platforms: diffs }, flags.output),
      );
      process.exitCode = diffs.some((d) => d.changes.length > 0) ? 1 : 0;
    } finally {
      await Promise.all([client.close(), operatorClient.close()]);
    }
  });
}
