// Repair: a child Deployment of a converged platform is deleted, again and again; each time the
// operator's informer sees the deletion and re-creates it. Timed from the delete call until the
// Deployment exists again under a new uid; writes are the operator's non-GET requests meanwhile.
import type { KubeObject } from "../../src/kube/index.js";
import type { FigureSet } from "../lib/figures.js";
import { median, percentile } from "../lib/stats.js";
import { waitFor, type BenchEnv } from "../lib/env.js";

export async function repair(env: BenchEnv, figs: FigureSet, namespace: string): Promise<void> {
  const times = env.quick ? 10 : 50;
  const deployments = await env.admin.list("apps/v1", "Deployment", { namespace });
  const name = deployments.items[0]?.metadata?.name;
  if (!name) throw new Error(`repair: no Deployment in ${namespace}`);
  const ref = { apiVersion: "apps/v1", kind: "Deployment", namespace, name };
  const ms: number[] = [];
  const writes: number[] = [];
  for (let i = 0; i < times; i++) {
    const before = await env.admin.get(ref);
    env.requests.reset();
    const start = performance.now();
    await env.admin.delete(ref);
    await waitFor(
      `${name} re-created`,
      120_000,
      async () => {
        const now = await env.admin.getIfExists<KubeObject>(ref);
        return now !== undefined && now.metadata?.uid !== before.metadata?.uid;
      },
      20,
    );
    ms.push(performance.now() - start);
    // The writes of one repair include the status update that follows the re-create.
    await new Promise((r) => setTimeout(r, 500));
    writes.push(env.requests.writes());
  }
  figs.add("repair", "p50", Math.round(median(ms)), "ms");
  figs.add("repair", "p99", Math.round(percentile(ms, 99)), "ms");
  figs.add("repair", "writes.p50", median(writes), "requests");
  figs.add("repair", "count", times, "repairs", "higher");
}
