// The schema's properties against the real API server, on a seeded run of generated specs (150
// by default; ONTO_PROPERTY_SPECS and ONTO_PROPERTY_SEED change it; `npm run test:chaos` runs
// 1000): any spec the CRD accepts renders, deterministically, to objects the API server accepts
// and stores as rendered; any spec `onto validate` refuses the API server refuses too, naming the
// same fields, and the other way round; a field broken on purpose is the field the refusal names.
import { beforeAll, describe, expect, it } from "vitest";
import { CRD_NAME } from "../../src/api/constants.js";
import { ontoPlatformCrd } from "../../src/api/crd.js";
import { KubeClient } from "../../src/kube/index.js";
import { adminKubeConfig, createTestNamespace, eventually } from "../support/cluster.js";
import { describeRun, runSchemaProperties } from "../support/properties.js";

const client = new KubeClient(adminKubeConfig());
const SPECS = Number(process.env.ONTO_PROPERTY_SPECS ?? 150);
const SEED = Number(process.env.ONTO_PROPERTY_SEED ?? 13_2024);

beforeAll(async () => {
  await client.apply(ontoPlatformCrd());
  await eventually("the OntoPlatform CRD to be served", async () => {
    const crd = (await client.requestJson(
      "GET",
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`,
    )) as { status?: { conditions?: { type: string; status: string }[] } };
    const established = crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    return established &&
      (await client.discovery.hasResource("onto.paas/v1alpha1", "OntoPlatform").catch(() => false))
      ? true
      : undefined;
  });
});

describe("schema properties against the API server", () => {
  it(`${SPECS} generated specs: offline and server agree; accepted specs render to objects the server takes`, async () => {
    const namespace = await createTestNamespace("props");
    const run = await runSchemaProperties({
      client,
      namespace,
      specs: SPECS,
      seed: SEED,
      log: (line) => console.log(line),
    });
    console.log(describeRun(run));
    for (const list of [
      run.disagreements,
      run.unnamed,
      run.refusedObjects,
      run.drifting,
      run.nondeterministic,
    ])
      for (const line of list.slice(0, 8)) console.log(`  ${line}`);
    expect(run.acceptedByBoth).toBeGreaterThan(SPECS / 3);
    expect(run.refusedByBoth).toBeGreaterThan(0);
    expect(run.disagreements).toEqual([]);
    expect(run.unnamed).toEqual([]);
    expect(run.refusedObjects).toEqual([]);
    expect(run.drifting).toEqual([]);
    expect(run.nondeterministic).toEqual([]);
  }, 900_000);
});
