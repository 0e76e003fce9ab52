// Disruption control against the real API server (issue 17): `onto diff` prints the restart plan
// for a log-level, an image and a resources change and for an operator-side change; an
// operator-side pod-template change waits until the platform opts in; an upgrade requested outside
// a maintenance window waits and starts when the window opens.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import { TEMPLATE_REVISION, TEMPLATE_REVISION_ANNOTATION } from "../../src/render/index.js";
import { eventually, kubeconfigPath } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import { loadSample, readPlatform } from "../support/platform.js";

const NAME = "onto-production";
let sample: OntoPlatform;
const fx = useOperator({
  namespaces: ["disrupt"],
  tlsSecret: true,
  platform: (namespace) => {
    sample = loadSample("production.yaml", namespace);
    sample.spec.upgradeStrategy = { soakSeconds: 0 };
    sample.spec.intelligencePlane = {
      ...sample.spec.intelligencePlane,
      reasoningService: { ...sample.spec.intelligencePlane?.reasoningService, gpu: { enabled: false } },
    };
    return sample;
  },
});
const { client, ns } = fx;
const dir = mkdtempSync(join(tmpdir(), "onto-disrupt-"));
const ref = () => ({ ...PLATFORM_REF, namespace: ns, name: NAME });
const kafkaRef = () => ({ apiVersion: "apps/v1", kind: "StatefulSet", namespace: ns, name: "kafka" });

function diff(
  file: string,
  platform: OntoPlatform,
  ...extra: string[]
): Promise<{ code: number; stdout: string }> {
  const path = join(dir, file);
  writeFileSync(path, stringify(platform));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/onto.js", "diff", "-f", path, ...extra],
      { env: { ...process.env, KUBECONFIG: kubeconfigPath(), NO_COLOR: "1" }, timeout: 300_000 },
      (err, stdout) => resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout }),
    );
  });
}
const planOf = (stdout: string) => stdout.slice(stdout.indexOf("restart plan for"));

describe("restart plan in onto diff", () => {
  it("a log-level change restarts the services that read it, for their config", async () => {
    const edited = structuredClone(sample);
    edited.spec.observability = { ...edited.spec.observability, logging: { level: "DEBUG", format: "json" } };
    const run = await diff("log.yaml", edited);
    console.log(`onto diff (log level):\n${planOf(run.stdout)}`);
    expect(run.stdout).toMatch(/\d+\. Deployment\/ontology-service restarts \(config\)/);
    expect(run.stdout).not.toMatch(/StatefulSet\/postgres restarts/);
  });

  it("an image change (a new version) and a resources change", async () => {
    const upgraded = structuredClone(sample);
    upgraded.spec.version = "1.6.0";
    const image = await diff("image.yaml", upgraded);
    console.log(`onto diff (version 1.6.0):\n${planOf(image.stdout)}`);
    expect(image.stdout).toMatch(
      /1\. StatefulSet\/postgres restarts \(image\); one member at a time by the operator, standbys first, the primary last after a switchover/,
    );
    const bigger = structuredClone(sample);
    bigger.spec.gateway = {
      ...bigger.spec.gateway,
      resources: { requests: { cpu: "700m", memory: "600Mi" } },
    };
    const resources = await diff("resources.yaml", bigger, "-o", "json");
    const json = JSON.parse(resources.stdout) as {
      platforms: { restarts: { name: string; restarts: boolean; reasons: string[] }[] }[];
    };
    const restarting = json.platforms[0]?.restarts.filter((r) => r.restarts);
    console.log(`onto diff -o json (gateway resources): ${JSON.stringify(restarting)}`);
    expect(restarting?.map((r) => `${r.name}:${r.reasons.join("+")}`)).toEqual(["gateway:resources"]);
  });
});

describe("an operator-side change", () => {
  it("waits until the platform opts in, and onto diff names it", async () => {
    // The kafka StatefulSet as an older operator left it: an older revision and another template
    // (one patch, so the running operator sees both at once).
    await client.mergePatch(kafkaRef(), {
      metadata: { annotations: { [TEMPLATE_REVISION_ANNOTATION]: "0" } },
      spec: { template: { spec: { terminationGracePeriodSeconds: 7 } } },
    });
    const waiting = await eventually("kafka waits", async () => {
      const p = await readPlatform(client, ns, NAME);
      return p.status?.disruption?.waiting?.find((w) => w.workload === "StatefulSet/kafka");
    });
    expect(waiting).toMatchObject({ cause: "OperatorChange", reasons: ["template"] });
    const kafka = await client.get<{ metadata: { annotations?: Record<string, string> } }>(kafkaRef());
    expect(kafka.metadata.annotations?.[TEMPLATE_REVISION_ANNOTATION]).toBe("0");
    const run = await diff("same.yaml", sample);
    console.log(`onto diff (operator-side change):\n${planOf(run.stdout)}`);
    expect(run.stdout).toContain(`operator-side change r0 -> r${TEMPLATE_REVISION}`);

    await client.mergePatch(ref(), { metadata: { annotations: { "onto.paas/approve-restarts": "true" } } });
    await eventually("kafka applied", async () => {
      const k = await client.get<{ metadata: { annotations?: Record<string, string> } }>(kafkaRef());
      return k.metadata.annotations?.[TEMPLATE_REVISION_ANNOTATION] === String(TEMPLATE_REVISION)
        ? k
        : undefined;
    });
    await client.mergePatch(ref(), { metadata: { annotations: { "onto.paas/approve-restarts": null } } });
  });
});

describe("maintenance windows", () => {
  it("an upgrade requested outside a window waits, and starts when the window opens", async () => {
    const opens = new Date(Date.now() + 25_000);
    const start = `${opens.getUTCSeconds()} ${opens.getUTCMinutes()} ${opens.getUTCHours()} * * *`;
    await client.mergePatch(ref(), {
      spec: { version: "1.6.0", maintenance: { windows: [{ start, duration: "10m", timeZone: "UTC" }] } },
    });
    const waiting = await eventually("upgrade waits", async () => {
      const p = await readPlatform(client, ns, NAME);
      return p.status?.conditions?.find(
        (c) => c.type === "Upgrading" && c.reason === "WaitingForMaintenanceWindow",
      );
    });
    console.log(`waiting: ${waiting.message}`);
    const before = await readPlatform(client, ns, NAME);
    expect(before.status?.upgrade?.phase ?? "none").not.toBe("InProgress");
    expect(before.status?.disruption?.nextWindow).toBe(
      new Date(Math.floor(opens.getTime() / 1000) * 1000).toISOString(),
    );
    const started = await eventually(
      "upgrade starts",
      async () => (await readPlatform(client, ns, NAME)).status?.upgrade,
      120_000,
    );
    console.log(`started at ${started.startedAt} (window opened ${opens.toISOString()})`);
    expect(new Date(started.startedAt).getTime()).toBeGreaterThanOrEqual(
      Math.floor(opens.getTime() / 1000) * 1000,
    );
  });
});
