// Ceiling: how many small objects per second this API server accepts from one client at a given
// number of requests in flight (creates of ConfigMaps), the ceiling the operator's own write rate
// is measured against.
import type { KubeObject } from "../../src/kube/index.js";
import type { FigureSet } from "../lib/figures.js";
import { benchNamespace, createNamespace, deleteNamespace, type BenchEnv } from "../lib/env.js";

export async function ceiling(
  env: BenchEnv,
  figs: FigureSet,
  operatorWritesPerSecond: number,
): Promise<void> {
  const perLevel = env.quick ? 200 : 1000;
  let best = 0;
  for (const concurrency of [1, 4, 16, 64]) {
    const ns = benchNamespace(`ceil-${concurrency}`);
    await createNamespace(env.admin, ns);
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < perLevel; i = next++)
          await env.admin.create({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: `cm-${i}`, namespace: ns },
            data: { k: "v" },
          } as KubeObject);
      }),
    );
    const rate = perLevel / ((performance.now() - start) / 1000);
    best = Math.max(best, rate);
    figs.add("ceiling", `c${concurrency}`, Math.round(rate), "objects/s", "higher");
    env.log(`ceiling concurrency ${concurrency}: ${Math.round(rate)} objects/s`);
    await deleteNamespace(env.admin, ns);
  }
  figs.add("ceiling", "max", Math.round(best), "objects/s", "higher");
  figs.add(
    "ceiling",
    "operator.writesPerSecond",
    Number(operatorWritesPerSecond.toFixed(1)),
    "objects/s",
    "higher",
  );
  figs.add(
    "ceiling",
    "operator.fraction",
    Number((operatorWritesPerSecond / best).toFixed(3)),
    "ratio",
    "higher",
  );
}
