// Noop and idle: what the operator sends for a converged platform when nothing changed, by HTTP
// method, for one reconcile run directly (noop) and over a quiet window (idle, per minute).
import type { FigureSet } from "../lib/figures.js";
import { PLATFORM_NAME, waitFor, type BenchEnv } from "../lib/env.js";

function byMethod(figs: FigureSet, scenario: string, counts: Record<string, number>, scale = 1): void {
  for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"])
    figs.add(
      scenario,
      method,
      Number(((counts[method] ?? 0) * scale).toFixed(2)),
      scale === 1 ? "requests" : "requests/min",
    );
}

export async function noopAndIdle(env: BenchEnv, figs: FigureSet, namespace: string): Promise<void> {
  // Let the converge's own follow-ups (status, requeues) and the deletion of the other converge
  // namespaces finish first: a terminating platform's requests are not idle ones.
  await waitFor(
    "the other bench namespaces deleted",
    300_000,
    async () => {
      const list = await env.admin.list("v1", "Namespace", { labelSelector: "onto.paas/bench=true" });
      return list.items.every((n) => n.metadata?.name === namespace);
    },
    1_000,
  );
  await new Promise((r) => setTimeout(r, 5_000));
  env.requests.reset();
  await env.operator.reconcileNow(`${namespace}/${PLATFORM_NAME}`);
  byMethod(figs, "noop", env.requests.counts);
  figs.add("noop", "total", env.requests.total(), "requests");

  const windowMs = env.idleSeconds * 1000;
  env.requests.reset();
  await new Promise((r) => setTimeout(r, windowMs));
  const perMinute = 60_000 / windowMs;
  byMethod(figs, "idle", env.requests.counts, perMinute);
  figs.add("idle", "total", Number((env.requests.total() * perMinute).toFixed(2)), "requests/min");
  figs.add("idle", "writes", Number((env.requests.writes() * perMinute).toFixed(2)), "requests/min");
  env.log(`idle requests by path: ${env.requests.top(8).join("; ")}`);
  figs.add("idle", "window", windowMs / 1000, "s", "higher");
}
