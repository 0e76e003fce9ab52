// Issue 18's leftovers against the real API server: an operator started while the OntoRelease CRD
// is not installed picks the CRD up at a discovery poll once it is (no restart), reads the
// releases created then and renders a platform of a version only such a release defines; and a
// change of an OntoRelease's verdict (Added → Conflict when a rival object names the same version,
// and back when the rival goes) records an Event on the object, Warning then Normal.
//
// Events about a cluster-scoped object must be in `default`. This operator watches one namespace,
// and the shipped single-namespace RBAC grants Events only in watched namespaces, so the test
// grants its ServiceAccount Events in `default` (what a cluster-wide install's ClusterRole has).
//
// The file deletes the OntoRelease CRD (and with it every OntoRelease object) and installs it
// again before its tests, so it is a `cluster-alone` file (vitest.config.ts): nothing else runs
// on the cluster meanwhile.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OntoPlatform } from "../../src/api/index.js";
import type { RunningOperator } from "../../src/controllers/operator.js";
import { NotFoundError, type KubeClient, type KubeObject } from "../../src/kube/index.js";
import { createTestNamespace, eventually } from "../support/cluster.js";
import { adminClient, installCrd, loadSample, readPlatform, startOperator } from "../support/platform.js";
import { deleteReleases, readReleases } from "../support/releases.js";

const ADDED_FILE = new URL("../releases/added-at-runtime.yaml", import.meta.url).pathname;
const CRD = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition" } as const;
const RELEASE_CRD = "ontoreleases.onto.paas";
const RELEASE = { apiVersion: "onto.paas/v1alpha1", kind: "OntoRelease" } as const;
const VERSION = "1.5.9-late";
const NAME = "late-1.5.9";
const RIVAL = "late-1.5.9-rival";

let client: KubeClient;
let operator: RunningOperator & { auditLog: string; logFile: string };
let ns = "";

type Release = KubeObject & {
  spec: Record<string, unknown>;
  status?: { conditions?: { type: string; status: string; reason: string }[] };
};
type EventObject = KubeObject & {
  type: string;
  reason: string;
  note?: string;
  regarding?: { kind?: string; name?: string };
};

/** Postgres of the test's release: a tag no built-in release has. */
const POSTGRES = { repository: "postgres", tag: "16.4-late" };

/** The test's release: added-at-runtime.yaml's images, its own Postgres tag, another name and version. */
function release(name: string): Release {
  const [base] = readReleases(ADDED_FILE);
  if (!base) throw new Error(`no release in ${ADDED_FILE}`);
  return {
    ...RELEASE,
    metadata: { name, labels: { "onto.paas/test": "true" } },
    spec: {
      ...base.spec,
      version: VERSION,
      description: "created after the operator started",
      images: { ...base.spec.images, postgres: POSTGRES },
    },
  };
}

async function accepted(name: string): Promise<{ status: string; reason: string } | undefined> {
  const r = await client.get<Release>({ ...RELEASE, name });
  return r.status?.conditions?.find((c) => c.type === "Accepted");
}

/**
 * Events about the OntoRelease `name`: the API server takes Events about a cluster-scoped object
 * only in `default`.
 */
async function eventsOf(name: string): Promise<EventObject[]> {
  const list = await client.list<EventObject>("events.k8s.io/v1", "Event", { namespace: "default" });
  return list.items.filter((e) => e.regarding?.kind === "OntoRelease" && e.regarding.name === name);
}

beforeAll(async () => {
  client = adminClient();
  await installCrd(client);
  await client.delete({ ...CRD, name: RELEASE_CRD }).catch(() => undefined);
  await eventually(
    "the OntoRelease CRD to be gone",
    async () =>
      client.get({ ...CRD, name: RELEASE_CRD }).then(
        () => undefined,
        (err: unknown) => (err instanceof NotFoundError ? true : undefined),
      ),
    120_000,
  );
  client.discovery.invalidate();
  ns = await createTestNamespace("rel-late");
  await client.apply(eventsInDefault(), { force: true });
  await client.apply(eventsInDefaultBinding(), { force: true });
  operator = await startOperator([ns], { discoveryIntervalMs: 1_000 });
});

const GRANT = () => `onto-late-crd-events-${ns}`.slice(0, 63);

function eventsInDefault(): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: GRANT(), namespace: "default", labels: { "onto.paas/test": "true" } },
    rules: [{ apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] }],
  } as KubeObject;
}

function eventsInDefaultBinding(): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: GRANT(), namespace: "default", labels: { "onto.paas/test": "true" } },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: GRANT() },
    subjects: [{ kind: "ServiceAccount", name: "onto-operator", namespace: ns }],
  } as KubeObject;
}

afterAll(async () => {
  await operator?.stop();
  await deleteReleases(client, [NAME, RIVAL]);
  for (const kind of ["RoleBinding", "Role"])
    await client
      .delete({ apiVersion: "rbac.authorization.k8s.io/v1", kind, namespace: "default", name: GRANT() })
      .catch(() => undefined);
  // Whatever happened above, the next file finds the CRD installed.
  await installCrd(client);
});

describe("an OntoRelease CRD installed after the operator started", () => {
  it("is watched from the next discovery poll: a platform of a version only a release defines renders", async () => {
    const platform = loadSample("minimal.yaml", ns);
    platform.spec.version = VERSION;
    await client.apply(platform);
    const unknown = await eventually("UnknownRelease while no release defines the version", async () => {
      const p: OntoPlatform = await readPlatform(client, ns, platform.metadata.name);
      return p.status?.conditions?.find((c) => c.reason === "UnknownRelease");
    });
    expect(unknown.message).toContain(VERSION);

    const started = Date.now();
    await installCrd(client);
    await client.apply(release(NAME), { force: true });
    const verdict = await eventually("the late release to be Accepted", () => accepted(NAME));
    expect(verdict).toMatchObject({ status: "True", reason: "Added" });
    const postgres = await eventually(
      "the platform's Postgres with the late release's image",
      async () => {
        const sts = await client
          .get<KubeObject & { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } }>({
            apiVersion: "apps/v1",
            kind: "StatefulSet",
            namespace: ns,
            name: "postgres",
          })
          .catch(() => undefined);
        return sts?.spec?.template?.spec?.containers?.[0]?.image;
      },
      120_000,
    );
    expect(postgres).toBe(`${POSTGRES.repository}:${POSTGRES.tag}`);
    console.log(
      `[late-crd] CRD installed -> release Accepted and platform rendered in ${((Date.now() - started) / 1000).toFixed(1)} s (discovery poll 1 s)`,
    );
  });
});

describe("a change of an OntoRelease's verdict", () => {
  it("records a Warning Event when a rival makes it a Conflict, and a Normal one when it is Added again", async () => {
    expect((await eventsOf(NAME)).map((e) => e.reason)).toEqual([]); // its first verdict (Added) is quiet
    await client.apply(release(RIVAL), { force: true });
    await eventually("a Conflict verdict", async () =>
      (await accepted(NAME))?.reason === "Conflict" ? true : undefined,
    );
    const conflict = await eventually("a Conflict Event on the release", async () =>
      (await eventsOf(NAME)).find((e) => e.reason === "Conflict"),
    );
    expect(conflict.type).toBe("Warning");
    expect(conflict.note).toMatch(/^was Added, now Conflict: OntoRelease objects .*late-1\.5\.9-rival/);
    // The rival's own first verdict is not used: it says so too.
    expect((await eventually("an Event on the rival", async () => (await eventsOf(RIVAL))[0])).reason).toBe(
      "Conflict",
    );

    await deleteReleases(client, [RIVAL]);
    const added = await eventually("an Added Event on the release", async () =>
      (await eventsOf(NAME)).find((e) => e.reason === "Added"),
    );
    expect(added.type).toBe("Normal");
    expect(added.note).toMatch(/^was Conflict, now Added: adds platform version 1\.5\.9-late/);
    expect(await accepted(NAME)).toMatchObject({ status: "True", reason: "Added" });
    expect((await eventsOf(NAME)).map((e) => e.reason).sort()).toEqual(["Added", "Conflict"]);
  });
});
