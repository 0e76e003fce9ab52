// The OntoPlatform CRD against the real API server: it installs, it refuses every invalid
// sample naming the field, it stores the valid ones with the same defaults resolveSpec applies,
// `kubectl explain` has the schema's descriptions, `kubectl get` has the printer columns, and
// the offline validator agrees with the server on every sample.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { API_VERSION, CRD_NAME, PLURAL } from "../../src/api/constants.js";
import { ontoPlatformCrd } from "../../src/api/crd.js";
import { resolveSpec } from "../../src/api/defaults.js";
import { validateYamlStream } from "../../src/api/documents.js";
import type { OntoPlatform } from "../../src/api/schema.js";
import { serverValidate } from "../../src/cli/server-validate.js";
import { KubeApiError, KubeClient } from "../../src/kube/index.js";
import {
  adminKubeConfig,
  clusterStateDir,
  createTestNamespace,
  eventually,
  kubeconfigPath,
} from "../support/cluster.js";

const samples = join(import.meta.dirname, "../../samples");
const VALID = ["production.yaml", "minimal.yaml", "tenant.yaml"];
const INVALID = readdirSync(join(samples, "invalid"))
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => join("invalid", f));

const client = new KubeClient(adminKubeConfig());

/** The documents of a sample, moved into `namespace` and renamed with `suffix` to be unique. */
function documents(file: string, namespace: string, suffix = ""): OntoPlatform[] {
  return parseAllDocuments(readFileSync(join(samples, file), "utf8")).map((doc) => {
    const object = doc.toJS() as OntoPlatform;
    object.metadata = { ...object.metadata, namespace, name: object.metadata.name + suffix };
    return object;
  });
}

function fieldOf(file: string): string {
  const field = /^# field: (\S+)$/m.exec(readFileSync(join(samples, file), "utf8"))?.[1];
  if (!field) throw new Error(`${file} has no '# field:' header`);
  return field;
}

const collection = (namespace: string) => `/apis/${API_VERSION}/namespaces/${namespace}/${PLURAL}`;
const strict = { fieldValidation: "Strict" };

async function create(object: OntoPlatform): Promise<OntoPlatform> {
  return (await client.requestJson("POST", collection(object.metadata.namespace), {
    body: object,
    query: strict,
  })) as OntoPlatform;
}

async function replace(object: OntoPlatform): Promise<OntoPlatform> {
  const path = `${collection(object.metadata.namespace)}/${object.metadata.name}`;
  const live = (await client.requestJson("GET", path)) as OntoPlatform;
  const body = {
    ...object,
    metadata: { ...object.metadata, resourceVersion: live.metadata.resourceVersion },
  };
  return (await client.requestJson("PUT", path, { body, query: strict })) as OntoPlatform;
}

/** Creates the documents in order (a repeated name is an update); the refusal, if any. */
async function submit(objects: OntoPlatform[]): Promise<KubeApiError | undefined> {
  const created = new Set<string>();
  for (const object of objects) {
    try {
      if (created.has(object.metadata.name)) await replace(object);
      else await create(object);
      created.add(object.metadata.name);
    } catch (err) {
      if (err instanceof KubeApiError && (err.code === 422 || err.code === 400)) return err;
      throw err;
    }
  }
  return undefined;
}

beforeAll(async () => {
  await client.apply(ontoPlatformCrd());
  await eventually("the OntoPlatform CRD to be Established", async () => {
    const crd = (await client.requestJson(
      "GET",
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`,
    )) as {
      status?: { conditions?: { type: string; status: string }[] };
    };
    return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
      ? true
      : undefined;
  });
  // Discovery may lag the Established condition by a moment.
  await eventually("ontoplatforms to be served", async () =>
    (await client.requestJson("GET", `/apis/${API_VERSION}`).catch(() => undefined)) ? true : undefined,
  );
});

describe("OntoPlatform CRD in the API server", () => {
  it("is served with its short name and category", async () => {
    const list = (await client.requestJson("GET", `/apis/${API_VERSION}`)) as {
      resources: { name: string; shortNames?: string[]; categories?: string[] }[];
    };
    const resource = list.resources.find((r) => r.name === PLURAL);
    expect(resource?.shortNames).toEqual(["onto"]);
    expect(resource?.categories).toEqual(["coomia"]);
  });

  it("refuses every invalid sample and names the field", async () => {
    const namespace = await createTestNamespace("api-invalid");
    const refusals: string[] = [];
    for (const file of INVALID) {
      const error = await submit(documents(file, namespace));
      expect(error, `${file} should be refused`).toBeDefined();
      expect(error?.message, file).toContain(fieldOf(file));
      refusals.push(`${file}: ${error?.message}`);
    }
    expect(refusals).toHaveLength(INVALID.length);
  });

  it("accepts every valid sample and stores the defaults resolveSpec applies", async () => {
    const namespace = await createTestNamespace("api-valid");
    for (const file of VALID) {
      const [object] = documents(file, namespace);
      if (!object) throw new Error(`${file} is empty`);
      const stored = await create(object);
      // The API server's defaulting and resolveSpec agree field for field.
      expect(stored.spec, file).toEqual(resolveSpec(object.spec));
      expect(stored.spec.upgradeStrategy?.healthTimeoutSeconds, file).toBe(300);
      expect(stored.spec.infrastructure?.postgres?.resources?.requests?.cpu, file).toMatch(/^[0-9]/);
    }
  });

  it("explains spec.infrastructure.kafka.topics (kubectl explain)", () => {
    const text = kubectl("explain", "ontoplatform.spec.infrastructure.kafka.topics");
    expect(text).toContain("Topics created in Kafka.");
    expect(text).toMatch(/replicationFactor\s+<integer>/);
    expect(text).toContain("name\t<string> -required-");
  });

  it("lists platforms by short name with Phase, Version, Ready and Age (kubectl get onto)", async () => {
    const namespace = await createTestNamespace("api-columns");
    const [object] = documents("minimal.yaml", namespace);
    await create(object!);
    const header = kubectl("get", "onto", "-n", namespace).split("\n")[0]?.trim().split(/\s+/);
    expect(header).toEqual(["NAME", "PHASE", "VERSION", "READY", "AGE"]);
  });

  it("agrees with `onto validate` offline on every sample", async () => {
    const namespace = await createTestNamespace("api-agree");
    const disagreements: string[] = [];
    for (const file of [...VALID, ...INVALID]) {
      const objects = documents(file, namespace, "-agree");
      const offline = validateYamlStream(readFileSync(join(samples, file), "utf8")).flatMap((r) => r.issues);
      // All but the last document are the stored state (transition samples); the last is checked.
      await submit(objects.slice(0, -1));
      const server = await serverValidate(client, objects.at(-1));
      if ((offline.length === 0) !== (server.length === 0))
        disagreements.push(`${file}: offline ${JSON.stringify(offline)} vs server ${JSON.stringify(server)}`);
    }
    expect(disagreements).toEqual([]);
  });
});

/** Runs the kubectl built with the control plane against it. */
function kubectl(...args: string[]): string {
  const state = JSON.parse(readFileSync(join(clusterStateDir(), "cluster.json"), "utf8")) as {
    binaries: { k8s: string };
  };
  return execFileSync(state.binaries.k8s, ["kubectl", "--kubeconfig", kubeconfigPath(), ...args], {
    encoding: "utf8",
  });
}
