// The `onto` commands a platform engineer runs against a live platform (issue 9), each as a real
// process (`node bin/onto.js ...` with KUBECONFIG set) against the production sample reconciled
// by an in-process operator: diff (exit 0 unchanged, 1 with exactly the changed objects and
// fields, prunes), status (tree, JSON, --until), pause/resume, approve-restarts, upgrade --watch
// (its restart plan, its progress), exit codes.
import { useOperator } from "../support/operator.js";
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import { SERVICE_MONITOR_API, VPA_API, renderFile } from "../../src/cli/commands/render.js";
import { eventually, kubeconfigPath } from "../support/cluster.js";
import { loadSample, readPlatform } from "../support/platform.js";

const NAME = "onto-production";
let sample: OntoPlatform;
const fx = useOperator({
  namespaces: ["cli"],
  tlsSecret: true,
  platform: (namespace) => {
    sample = loadSample("production.yaml", namespace);
    // Upgrades here test the CLI, not the canary timing: no soak. And no GPU: the shared cluster's
    // 16 GPUs may be taken by other files' platforms, and the CLI does not care where pods run.
    sample.spec.upgradeStrategy = { soakSeconds: 0 };
    sample.spec.intelligencePlane = {
      ...sample.spec.intelligencePlane,
      reasoningService: { ...sample.spec.intelligencePlane?.reasoningService, gpu: { enabled: false } },
    };
    return sample;
  },
});
const { client, ns } = fx;
const dir = mkdtempSync(join(tmpdir(), "onto-cli-"));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `onto ARGS` as its own process with the test cluster's kubeconfig; never blocks the loop. */
function onto(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/onto.js", ...args],
      { env: { ...process.env, KUBECONFIG: kubeconfigPath(), NO_COLOR: "1" }, timeout: 300_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function writePlatform(file: string, platform: OntoPlatform): string {
  const path = join(dir, file);
  writeFileSync(path, stringify(platform));
  return path;
}

function edited(change: (p: OntoPlatform) => void): OntoPlatform {
  const copy = structuredClone(sample);
  change(copy);
  return copy;
}

/** Kind/name of every object whose rendering differs between two platforms (offline, pure). */
function renderedDifferences(a: OntoPlatform, b: OntoPlatform): { changed: string[]; gone: string[] } {
  const render = (p: OntoPlatform) =>
    new Map(
      // The optional APIs the local cluster serves (the Prometheus Operator's and the VPA's CRDs).
      renderFile(stringify(p), { apiVersions: [SERVICE_MONITOR_API, VPA_API] }).map((o) => [
        `${o.kind}/${o.metadata.name}`,
        o,
      ]),
    );
  const before = render(a);
  const after = render(b);
  const changed = [...after].filter(
    ([id, o]) => before.has(id) && JSON.stringify(before.get(id)) !== JSON.stringify(o),
  );
  return {
    changed: changed.map(([id]) => id).sort(),
    gone: [...before.keys()].filter((id) => !after.has(id)).sort(),
  };
}

/** The `~ Kind/name`, `+ ...`, `- ...` lines of diff's text output, by sign. */
function objectLines(stdout: string, sign: "~" | "+" | "-"): string[] {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith(`${sign} `))
    .map((l) => l.slice(2).split("  ")[0] ?? "")
    .sort();
}

describe("onto diff", () => {
  it("finds no difference for the file the platform was applied from, and exits 0", async () => {
    const run = await onto("diff", "-f", writePlatform("same.yaml", sample));
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe("no differences\n");
    expect(run.code).toBe(0);
  });

  it("lists exactly the objects and fields a replica count and the log level change, and exits 1", async () => {
    const changed = edited((p) => {
      p.spec.gateway = { ...p.spec.gateway, replicas: 5 };
      p.spec.observability = { ...p.spec.observability, logging: { level: "DEBUG", format: "json" } };
    });
    const run = await onto("diff", "-f", writePlatform("edited.yaml", changed));
    expect(run.code).toBe(1);
    const expected = renderedDifferences(sample, changed);
    // The gateway's Deployment and every component's ConfigMap (and the workloads whose pod
    // template carries the config checksum), nothing else.
    expect(expected.changed).toContain("Deployment/gateway");
    expect(expected.changed).toContain("ConfigMap/gateway-config");
    expect(objectLines(run.stdout, "~")).toEqual(
      [...expected.changed, "OntoPlatform/onto-production"].sort(),
    );
    expect(objectLines(run.stdout, "+")).toEqual([]);
    expect(objectLines(run.stdout, "-")).toEqual([]);
    expect(run.stdout).toContain("    spec.gateway.replicas: 3 -> 5\n");
    expect(run.stdout).toContain("    spec.observability.logging.level: INFO -> DEBUG\n");
    const gateway = run.stdout.slice(run.stdout.indexOf("~ Deployment/gateway\n"));
    expect(gateway).toMatch(/^~ Deployment\/gateway\n {4}spec\.replicas: 3 -> 5\n/);
    expect(run.stdout).toContain("~ ConfigMap/gateway-config\n    data.LOG_LEVEL: INFO -> DEBUG\n");
    expect(run.stdout).toMatch(
      new RegExp(`0 to add, ${expected.changed.length + 1} to change, 0 to prune\\n$`),
    );

    // The same answer for scripts; the live platform is untouched (dry runs only).
    const json = await onto("diff", "-f", join(dir, "edited.yaml"), "-o", "json");
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.stdout) as {
      platforms: { changes: { op: string; kind: string; name: string }[] }[];
    };
    expect(parsed.platforms[0]?.changes.map((c) => `${c.kind}/${c.name}`).sort()).toEqual(
      objectLines(run.stdout, "~"),
    );
    expect((await readPlatform(client, ns, NAME)).spec.gateway?.replicas).toBe(3);
  });

  it("lists what the operator would prune when a component is turned off", async () => {
    const withoutTemporal = edited((p) => {
      p.spec.intelligencePlane = {
        ...p.spec.intelligencePlane,
        agentRuntime: { ...p.spec.intelligencePlane?.agentRuntime, temporal: { enabled: false } },
      };
    });
    const run = await onto("diff", "-f", writePlatform("no-temporal.yaml", withoutTemporal));
    expect(run.code).toBe(1);
    const expected = renderedDifferences(sample, withoutTemporal);
    expect(expected.gone).toContain("Deployment/temporal");
    expect(objectLines(run.stdout, "-")).toEqual(expected.gone);
    expect(objectLines(run.stdout, "~")).toEqual(
      [...expected.changed, "OntoPlatform/onto-production"].sort(),
    );
  });

  it("exits 2 on a file it cannot use, naming the field", async () => {
    const bad = writePlatform(
      "bad.yaml",
      edited((p) => {
        p.spec.gateway = { ...p.spec.gateway, replicas: -1 };
      }),
    );
    const run = await onto("diff", "-f", bad);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("gateway.replicas");
    expect((await onto("diff", "-f", join(dir, "missing.yaml"))).code).toBe(2);
    const elsewhere = await onto("diff", "-f", join(dir, "same.yaml"), "-n", "another-namespace");
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain(`the file says namespace ${ns}, -n says another-namespace`);
  });
});

describe("onto status", () => {
  it("shows every plane and component with ready/desired, the phase, conditions and Events", async () => {
    const run = await onto("status", NAME, "-n", ns);
    expect(run.code).toBe(0);
    const platform = await readPlatform(client, ns, NAME);
    expect(run.stdout.split("\n")[0]).toBe(
      `OntoPlatform ${ns}/${NAME}  Running  version 1.5.0  ready 13/13  generation ${platform.metadata.generation}, observed ${platform.metadata.generation}`,
    );
    for (const plane of ["infrastructure", "control plane", "data plane", "intelligence plane", "gateway"])
      expect(run.stdout).toMatch(new RegExp(`^[├└]─ ${plane}  Ready$`, "m"));
    for (const [name, state] of Object.entries(platform.status?.componentStatuses ?? {}))
      expect(run.stdout).toMatch(
        new RegExp(`─ ${name}\\s+${state.ready}/${state.desired}\\s+Ready\\s+1\\.5\\.0$`, "m"),
      );
    expect(Object.keys(platform.status?.componentStatuses ?? {})).toHaveLength(13);
    expect(run.stdout).toMatch(/^ {2}Available\s+True\s+AllComponentsReady\s/m);
    // What the operator created: one Event for the pass, counted by component.
    expect(run.stdout).toMatch(/Normal\s+Missing\s+created \d+ objects: postgres \d+, redis \d+/);
  });

  it("prints JSON (and YAML) for scripts", async () => {
    const run = await onto("status", NAME, "-n", ns, "-o", "json");
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout) as { platform: OntoPlatform; events: { reason: string }[] };
    expect(doc.platform.status?.phase).toBe("Running");
    expect(doc.platform.metadata.name).toBe(NAME);
    expect(doc.events.some((e) => e.reason === "Missing")).toBe(true);
    expect(run.stdout).not.toContain("managedFields");
    const yaml = await onto("status", NAME, "-n", ns, "-o", "yaml");
    expect(yaml.stdout).toMatch(/^---\nplatform:\n/);
  });

  it("--watch --until Running exits 0 once Running; a platform in Error exits 1; a missing one 2", async () => {
    const running = await onto("status", NAME, "-n", ns, "--watch", "--until", "Running");
    expect(running.code).toBe(0);
    expect(running.stderr).toContain(`reached: ${ns}/${NAME} phase Running`);

    // A second platform in the namespace is refused by the operator (phase Error, NamespaceTaken).
    await client.apply({ ...loadSample("minimal.yaml", ns), metadata: { name: "intruder", namespace: ns } });
    const failed = await onto(
      "status",
      "intruder",
      "-n",
      ns,
      "--watch",
      "--until",
      "Running",
      "--timeout",
      "60",
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("phase Error: NamespaceTaken");
    await client.delete({ ...PLATFORM_REF, namespace: ns, name: "intruder" });

    const missing = await onto("status", "nothing-here", "-n", ns);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`OntoPlatform ${ns}/nothing-here not found`);
  });
});

describe("onto pause / resume", () => {
  it("flip spec.paused, and the operator reports Paused until resumed", async () => {
    const paused = await onto("pause", NAME, "-n", ns);
    expect(paused.code).toBe(0);
    expect((await readPlatform(client, ns, NAME)).spec.paused).toBe(true);
    await eventually("the operator to report Paused", async () => {
      const p = await readPlatform(client, ns, NAME);
      const progressing = p.status?.conditions?.find((c) => c.type === "Progressing");
      return p.status?.observedGeneration === p.metadata.generation && progressing?.reason === "Paused"
        ? true
        : undefined;
    });
    expect((await onto("status", NAME, "-n", ns)).stdout).toMatch(
      /PAUSED\n[\s\S]*Progressing\s+False\s+Paused/,
    );

    expect((await onto("resume", NAME, "-n", ns)).code).toBe(0);
    expect((await readPlatform(client, ns, NAME)).spec.paused).toBe(false);
    await eventually("the operator to reconcile again", async () => {
      const p = await readPlatform(client, ns, NAME);
      const progressing = p.status?.conditions?.find((c) => c.type === "Progressing");
      return p.status?.observedGeneration === p.metadata.generation && progressing?.reason !== "Paused"
        ? true
        : undefined;
    });
  });
});

describe("onto approve-restarts", () => {
  it("shows what waits, sets the annotation, says when it is already set, and --revoke removes it", async () => {
    const annotation = async () =>
      (await readPlatform(client, ns, NAME)).metadata.annotations?.["onto.paas/approve-restarts"];
    const approved = await onto("approve-restarts", NAME, "-n", ns);
    expect(approved.stderr).toBe("");
    expect(approved.code).toBe(0);
    const lines = approved.stdout.split("\n");
    expect(lines[0]).toBe(`${ns}/${NAME}: what waits`);
    // Without maintenance windows nothing of this platform waits.
    expect(lines[1]).toBe("  no pod restart waits now");
    expect(approved.stdout).toContain(`approved ${ns}/${NAME}: held restarts go ahead now`);
    expect(await annotation()).toBe("true");
    const again = await onto("approve-restarts", NAME, "-n", ns);
    expect(again.stdout).toContain(`${ns}/${NAME}: restarts are already approved`);
    const revoked = await onto("approve-restarts", NAME, "-n", ns, "--revoke");
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked ${ns}/${NAME}`);
    expect(await annotation()).toBeUndefined();
    expect((await onto("approve-restarts", "no-such-platform", "-n", ns)).code).toBe(2);
  });
});

describe("onto upgrade", () => {
  it("refuses an unknown version with exit 2 and changes nothing", async () => {
    const run = await onto("upgrade", NAME, "-n", ns, "--to", "9.9.9");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown platform version 9.9.9");
    expect((await readPlatform(client, ns, NAME)).spec.version).toBe("1.5.0");
  });

  it("--watch shows progress until the platform runs the version, and exits 0", async () => {
    const run = await onto("upgrade", NAME, "-n", ns, "--to", "1.6.0", "--watch", "--timeout", "240");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`${ns}/${NAME}: spec.version 1.5.0 -> 1.6.0`);
    // The restart plan, once, before the progress: ontology-service's image changes in 1.6.0.
    expect(lines[1]).toBe("restart plan of the upgrade to 1.6.0 (group by group, each first as a canary):");
    expect(lines.filter((l) => l.startsWith("restart plan of the upgrade"))).toHaveLength(1);
    expect(lines.some((l) => /^ {2}\d+\. Deployment\/ontology-service restarts \(image[,)]/.test(l))).toBe(
      true,
    );
    // The orchestrator's plan: the components whose image 1.6.0 changes, one after the other.
    const progress = lines.filter((l) => l.startsWith("upgrading to 1.6.0 "));
    expect(progress.length).toBeGreaterThan(1);
    for (const line of progress)
      expect(line).toMatch(/^upgrading to 1\.6\.0 \[[#-]{24}\] \d+\/\d+( {2}\S.*)?$/);
    expect(progress.some((l) => /\/ontology-service (Canary|Soak|Rollout)/.test(l))).toBe(true);
    expect(lines.at(-2)).toMatch(/^done to 1\.6\.0 \[#{24}\] (\d+)\/\1$/);
    expect(lines.at(-1)).toBe(`upgraded ${ns}/${NAME} to 1.6.0`);
    const platform = await readPlatform(client, ns, NAME);
    expect(platform.status?.version).toBe("1.6.0");
  });

  it("refuses a downgrade past a point of no return, even forced (exit 2)", async () => {
    // The production sample runs Temporal, whose schema 1.6.0 migrates when its first pod starts.
    const run = await onto("upgrade", NAME, "-n", ns, "--to", "1.5.0", "--force");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "refusing 1.6.0 -> 1.5.0: it would undo what cannot be undone: temporal Canary of 1.6.0",
    );
    expect((await readPlatform(client, ns, NAME)).spec.version).toBe("1.6.0");
  });
});
