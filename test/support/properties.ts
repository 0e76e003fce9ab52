// The schema properties, run against a real API server: generated specs (test/support/
// spec-arbitrary.ts) are validated offline and by the server (dry-run create), and those both
// accept are rendered twice and every distinct object is sent to the server as a dry-run
// server-side apply. Used by the seeded run of `npm test` (test/cluster/api-properties.test.ts)
// and the full run of `npm run test:chaos`; the caller chooses how many specs and the seed.
import fc from "fast-check";
import { API_VERSION, KIND, PLURAL } from "../../src/api/constants.js";
import { resolveSpec } from "../../src/api/defaults.js";
import type { OntoPlatformSpec } from "../../src/api/schema.js";
import { validateOntoPlatform, type ValidationIssue } from "../../src/api/validate.js";
import { canonical } from "../../src/runtime/index.js";
import { applyNeed, withAppliedHash } from "../../src/controllers/platform/drift.js";
import { KubeApiError, type KubeClient } from "../../src/kube/index.js";
import { KNOWN_VERSIONS, releaseFor } from "../../src/release/index.js";
import { renderPlatform, type Capabilities, type RenderedObject } from "../../src/render/index.js";
import { mutate, platformNameArbitrary, specArbitrary } from "./spec-arbitrary.js";

export interface PropertyRun {
  seed: number;
  specs: number;
  mutations: number;
  acceptedByBoth: number;
  refusedByBoth: number;
  unknownVersion: number;
  rendered: number;
  objects: number;
  distinctObjects: number;
  /** offline and server verdicts differ, or name different fields. */
  disagreements: string[];
  /** A mutated field the refusals did not name. */
  unnamed: string[];
  /** Rendered objects the API server refused (dry run). */
  refusedObjects: string[];
  /** Objects the server would store differently from what was rendered (a drift loop). */
  drifting: string[];
  /** Renders that differed between two runs, or from the server's defaulting. */
  nondeterministic: string[];
  durationMs: number;
}

interface Case {
  name: string;
  spec: unknown;
  /** For a mutation: the field broken and how. */
  broken?: { path: string; how: string };
}

/** Runs `tasks` with at most `limit` at a time. */
async function pool<T>(
  items: T[],
  limit: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await task(items[index]!, index);
      }
    }),
  );
}

/** The refusal's field paths, or [] when the server would store the document. */
async function serverVerdict(
  client: KubeClient,
  namespace: string,
  doc: unknown,
): Promise<{ issues: ValidationIssue[]; stored?: { spec: OntoPlatformSpec } }> {
  try {
    const stored = (await client.requestJson(
      "POST",
      `/apis/${API_VERSION}/namespaces/${namespace}/${PLURAL}`,
      {
        body: doc,
        query: { dryRun: "All", fieldValidation: "Strict" },
      },
    )) as { spec: OntoPlatformSpec };
    return { issues: [], stored };
  } catch (err) {
    if (!(err instanceof KubeApiError) || err.code >= 500) throw err;
    const causes = err.status?.details?.causes ?? [];
    if (causes.length === 0) return { issues: [{ path: "", message: err.message }] };
    return {
      issues: causes.map((c) => ({
        path: c.field === undefined || c.field === "<nil>" ? "" : c.field,
        message: c.message ?? c.reason ?? "",
      })),
    };
  }
}

const paths = (issues: ValidationIssue[]): string[] => [...new Set(issues.map((i) => i.path))].sort();

export async function runSchemaProperties(opts: {
  client: KubeClient;
  namespace: string;
  specs: number;
  seed: number;
  capabilities?: Capabilities;
  log?: (line: string) => void;
}): Promise<PropertyRun> {
  const started = performance.now();
  const { client, namespace } = opts;
  const capabilities = opts.capabilities ?? { serviceMonitor: false, verticalPodAutoscaler: false };
  const arbitrary = fc.record({
    name: platformNameArbitrary,
    spec: fc.oneof(
      { weight: 3, arbitrary: specArbitrary(KNOWN_VERSIONS, { absentWeight: 3 }) },
      { weight: 1, arbitrary: specArbitrary(KNOWN_VERSIONS, { absentWeight: 1 }) },
    ),
    pick: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    kind: fc.nat(7),
  });
  const drawn = fc.sample(arbitrary, { numRuns: opts.specs, seed: opts.seed });
  const cases: Case[] = drawn.map(({ name, spec }) => ({ name, spec }));
  // One in three draws also yields a copy with one field broken on purpose.
  for (const [i, d] of drawn.entries()) {
    if (i % 3 !== 0) continue;
    const m = mutate(d.spec, d.pick, d.kind);
    if (m) cases.push({ name: d.name, spec: m.spec, broken: { path: m.path, how: m.how } });
  }
  const run: PropertyRun = {
    seed: opts.seed,
    specs: opts.specs,
    mutations: cases.length - opts.specs,
    acceptedByBoth: 0,
    refusedByBoth: 0,
    unknownVersion: 0,
    rendered: 0,
    objects: 0,
    distinctObjects: 0,
    disagreements: [],
    unnamed: [],
    refusedObjects: [],
    drifting: [],
    nondeterministic: [],
    durationMs: 0,
  };
  const toApply = new Map<string, { object: RenderedObject; from: string }>();
  const short = (value: unknown): string => JSON.stringify(value).slice(0, 600);

  await pool(cases, 8, async (c, index) => {
    const doc = { apiVersion: API_VERSION, kind: KIND, metadata: { name: c.name, namespace }, spec: c.spec };
    const offline = validateOntoPlatform(doc);
    const server = await serverVerdict(client, namespace, doc);
    const label = `case ${index}${c.broken ? ` (${c.broken.path} ${c.broken.how})` : ""}`;
    if (paths(offline).join() !== paths(server.issues).join()) {
      const only = (a: ValidationIssue[], b: ValidationIssue[]): ValidationIssue[] =>
        a.filter((i) => !paths(b).includes(i.path));
      run.disagreements.push(
        `${label}: only offline ${JSON.stringify(only(offline, server.issues))}; only the server ${JSON.stringify(only(server.issues, offline))}; for ${JSON.stringify(doc.spec)}`,
      );
      return;
    }
    if (c.broken && offline.length > 0 && !paths(offline).some((p) => p.startsWith(c.broken!.path))) {
      run.unnamed.push(`${label}: refused at ${paths(offline).join(", ")}`);
    }
    if (offline.length > 0) {
      run.refusedByBoth++;
      return;
    }
    run.acceptedByBoth++;
    const spec = resolveSpec(c.spec as OntoPlatformSpec);
    if (JSON.stringify(canonical(resolveSpec(server.stored!.spec))) !== JSON.stringify(canonical(spec))) {
      run.nondeterministic.push(
        `${label}: the server's defaults differ from resolveSpec for ${short(c.spec)}`,
      );
      return;
    }
    if (!KNOWN_VERSIONS.includes(spec.version)) {
      run.unknownVersion++;
      return;
    }
    const render = (): RenderedObject[] =>
      renderPlatform({
        platform: { name: c.name, namespace, uid: "00000000-0000-0000-0000-00000000abcd" },
        spec,
        release: releaseFor(spec.version),
        capabilities,
        generateSecret: ({ length }) => "s".repeat(length),
      });
    let objects: RenderedObject[];
    try {
      objects = render();
    } catch (err) {
      run.refusedObjects.push(
        `${label}: render threw ${err instanceof Error ? err.message : String(err)} for ${short(c.spec)}`,
      );
      return;
    }
    if (JSON.stringify(render()) !== JSON.stringify(objects)) {
      run.nondeterministic.push(`${label}: two renders differ for ${short(c.spec)}`);
      return;
    }
    run.rendered++;
    run.objects += objects.length;
    for (const object of objects) {
      const key = JSON.stringify(canonical(object));
      if (!toApply.has(key)) toApply.set(key, { object, from: `${label}: ${short(c.spec)}` });
    }
  });

  run.distinctObjects = toApply.size;
  opts.log?.(`[properties] ${cases.length} cases checked; ${toApply.size} distinct objects to dry-run apply`);
  await pool([...toApply.values()], 16, async ({ object, from }) => {
    const desired = withAppliedHash(object);
    const id = `${object.kind}/${object.metadata.name}`;
    try {
      const stored = await client.apply(desired, { dryRun: true });
      const need = applyNeed(desired, stored);
      if (need.apply)
        run.drifting.push(`${id} stored unlike rendered at ${need.path ?? need.reason}; from ${from}`);
    } catch (err) {
      if (!(err instanceof KubeApiError) || err.code >= 500) throw err;
      run.refusedObjects.push(`${id}: ${err.message.slice(0, 400)}; from ${from}`);
    }
  });
  run.durationMs = performance.now() - started;
  return run;
}

/** One line per figure, for the test output. */
export function describeRun(run: PropertyRun): string {
  return [
    `[figures] schema properties (seed ${run.seed}): ${run.specs} specs generated + ${run.mutations} with one field broken`,
    `accepted by both ${run.acceptedByBoth}, refused by both ${run.refusedByBoth}, disagreements ${run.disagreements.length}, broken field not named ${run.unnamed.length}`,
    `rendered ${run.rendered} (unknown version ${run.unknownVersion}), objects ${run.objects} (${run.distinctObjects} distinct, dry-run applied)`,
    `refused by the API server ${run.refusedObjects.length}, stored unlike rendered ${run.drifting.length}, non-deterministic ${run.nondeterministic.length}`,
    `in ${(run.durationMs / 1000).toFixed(1)} s`,
  ].join("; ");
}
