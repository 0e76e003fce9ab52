// The operator as the chaos cases run it: a child process (test/cluster/upgrade-operator.child.ts:
// runOperator with the test releases) under the generated RBAC of one namespace, which a case may
// SIGKILL and start again at any moment; plus the end-state checks of an upgrade that the
// uninterrupted runs (upgrade-canary, upgrade-rollback) reach.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  enabledComponents,
  resolveSpec,
  type ComponentInfo,
  type OntoPlatform,
} from "../../src/api/index.js";
import type { KubeClient } from "../../src/kube/index.js";
import { grantOperatorAccess } from "../../src/permissions/service-account-access.js";
import { imageFor, releaseFor } from "../../src/release/index.js";
import { isPodReady } from "../../src/controllers/shared/kube-views.js";
import { auditLines, type Pod, type Workload } from "../cluster/upgrade-support.js";
import { startChild, waitFor, type Child } from "./support.js";

const SCRIPT = new URL("../cluster/upgrade-operator.child.ts", import.meta.url).pathname;

export interface OperatorSlot {
  namespace: string;
  auditLog: string;
  kubeconfig: string;
  child: Child | undefined;
  /** Starts an operator process; resolves once it runs. */
  start(): Promise<Child>;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
  revoke(): Promise<void>;
}

export async function operatorSlot(admin: KubeClient, namespace: string): Promise<OperatorSlot> {
  const dir = mkdtempSync(join(tmpdir(), "onto-chaos-"));
  const access = await grantOperatorAccess(admin, {
    namespace,
    serviceAccount: "onto-operator",
    name: `onto-operator-${namespace}`.slice(0, 63),
    watchNamespaces: [namespace],
  });
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, access.kubeconfig, { mode: 0o600 });
  let starts = 0;
  const slot: OperatorSlot = {
    namespace,
    auditLog: join(dir, "audit.log"),
    kubeconfig,
    child: undefined,
    async start() {
      const child = startChild(`operator-${namespace}-${starts++}`, SCRIPT, {
        NAMESPACE: namespace,
        KUBECONFIG_PATH: kubeconfig,
        AUDIT_LOG: slot.auditLog,
      });
      await waitFor(
        "the operator to start",
        () => (child.lines.some((l) => l.msg === "started") ? true : undefined),
        120_000,
      );
      slot.child = child;
      return child;
    },
    async kill() {
      const child = slot.child;
      if (!child?.alive()) return;
      child.process.kill("SIGKILL");
      await child.exited;
      slot.child = undefined;
    },
    revoke: () => access.revoke(),
  };
  return slot;
}

const image = (w: Workload | undefined): string => w?.spec?.template?.spec?.containers?.[0]?.image ?? "";

/**
 * What differs from "every workload on `version`'s images, all replicas Ready, no canary";
 * [] when the platform is settled there.
 */
export async function settledProblems(
  client: KubeClient,
  platform: OntoPlatform,
  version: string,
): Promise<string[]> {
  const ns = platform.metadata.namespace;
  const spec = resolveSpec(platform.spec);
  const components: ComponentInfo[] = enabledComponents(spec);
  const problems: string[] = [];
  const deployments = await client.list<Workload>("apps/v1", "Deployment", { namespace: ns });
  for (const d of deployments.items)
    if (d.metadata?.name?.endsWith("-canary")) problems.push(`canary ${d.metadata.name} left`);
  const pods = (await client.list<Pod>("v1", "Pod", { namespace: ns })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
  for (const c of components) {
    const w = await client.getIfExists<Workload>({
      apiVersion: "apps/v1",
      kind: c.kind,
      namespace: ns,
      name: c.name,
    });
    const want = imageFor(releaseFor(version), c.name, spec.global.imageRegistry);
    if (image(w) !== want) problems.push(`${c.name} runs ${image(w) || "nothing"}, not ${want}`);
    const mine = pods.filter(
      (p) =>
        p.metadata?.labels?.["app.kubernetes.io/name"] === c.name && !p.metadata?.name?.includes("-canary"),
    );
    if (mine.length !== w?.spec?.replicas || !mine.every(isPodReady))
      problems.push(`${c.name}: ${mine.filter(isPodReady).length}/${w?.spec?.replicas} Ready pods`);
  }
  return problems;
}

/** Canaries created more than once, by the audit log (a duplicated step). */
export function duplicatedCanaries(auditLog: string, since: string): string[] {
  const created = auditLines(auditLog)
    .filter((l) => l.time >= since && l.verb === "create" && l.object.name.endsWith("-canary"))
    .map((l) => l.object.name);
  return [...new Set(created.filter((name, i) => created.indexOf(name) !== i))];
}
