// Disruption control's emergencies against the real API server (issue 17), with every maintenance
// window closed: a certificate about to expire is rolled before it does (the restart onto the
// renewed certificate waits until the old one expires within half its renewal margin, then goes
// ahead with an EmergencyRestart Event); `onto approve-restarts` lets the held restarts go; an OOM
// memory raise waits (status.disruption names it, the limit stays); a crash-looping workload's fix
// is applied at once, recorded as EmergencyRestart. KWOK plays the OOM kills and the crash loop
// (tools/localcluster/kwok/stages.yaml). Prints the figures: seconds from change to apply, and
// seconds before expiry.
import { X509Certificate } from "node:crypto";
import { execFile } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import { TLS_REVISION_ANNOTATION } from "../../src/render/index.js";
import { auditLines } from "../support/audit.js";
import { eventually, kubeconfigPath } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import { loadSample, readPlatform } from "../support/platform.js";
import { events, testerClient } from "./healing-support.js";

const NAME = "onto-minimal";
/** Mounts the platform certificate and reads it only at start: rolled onto a renewed one. */
const ROLLED = "auth-service";
const fx = useOperator({
  namespaces: ["disrupt-emergency"],
  platform: (namespace) => {
    const platform: OntoPlatform = loadSample("minimal.yaml", namespace);
    // The operator issues the certificate; 3 minutes (1 minute of skew backdating on top): renewed
    // 100 s after issue, expiring 80 s later, an emergency from 40 s before its expiry.
    platform.spec.global = {
      tlsEnabled: true,
      tlsSecretName: "onto-tls",
      tls: { certificateLifetime: "3m" },
    };
    platform.spec.controlPlane = {
      ontologyService: { resources: { requests: { cpu: "250m", memory: "1Gi" }, limits: { memory: "4Gi" } } },
    };
    platform.spec.selfHealing = { maxMemory: "12Gi", cooldownSeconds: 0, maxActionsPerHour: 20 };
    return platform;
  },
});
const { client, ns } = fx;
const figures: Record<string, number> = {};
const platformRef = () => ({ ...PLATFORM_REF, namespace: ns, name: NAME });
const deploymentRef = (name: string) => ({ apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name });
const since = (ms: number): number => Number(((Date.now() - ms) / 1000).toFixed(1));

type Deployment = KubeObject & {
  spec?: {
    template?: {
      metadata?: { annotations?: Record<string, string> };
      spec?: {
        containers?: {
          name: string;
          resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
        }[];
      };
    };
  };
};

const deployment = (name: string) => client.get<Deployment>(deploymentRef(name));
const serialOf = async (name: string) =>
  (await deployment(name)).spec?.template?.metadata?.annotations?.[TLS_REVISION_ANNOTATION];
const container = async (name: string) =>
  (await deployment(name)).spec?.template?.spec?.containers?.find((c) => c.name === name);

async function certificate(): Promise<X509Certificate> {
  const secret = await client.get<KubeObject & { data?: Record<string, string> }>({
    apiVersion: "v1",
    kind: "Secret",
    namespace: ns,
    name: "onto-tls",
  });
  return new X509Certificate(Buffer.from(secret.data?.["tls.crt"] ?? "", "base64").toString("utf8"));
}

function onto(...args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/onto.js", ...args],
      { env: { ...process.env, KUBECONFIG: kubeconfigPath(), NO_COLOR: "1" }, timeout: 120_000 },
      (err, stdout) => resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout }),
    );
  });
}

/** A daily window 12 hours from now: closed for the whole test. */
function closedWindow() {
  const hour = (new Date().getUTCHours() + 12) % 24;
  return [{ start: `0 ${hour} * * *`, duration: "1h", timeZone: "UTC" }];
}

afterAll(() => {
  console.log(`disruption emergencies (seconds): ${JSON.stringify(figures)}`);
});

describe("with every maintenance window closed", () => {
  it("a certificate about to expire is rolled before it expires", async () => {
    await client.mergePatch(platformRef(), { spec: { maintenance: { windows: closedWindow() } } });
    await eventually(
      "the window to be seen closed",
      async () => (await readPlatform(client, ns, NAME)).status?.disruption?.nextWindow,
    );
    // The certificate the pods run with now, then the renewal that replaces it: its restart waits.
    const running = await serialOf(ROLLED);
    if (!running) throw new Error(`${ROLLED} carries no certificate serial`);
    const renewed = await eventually(
      "a renewal",
      async () => {
        const c = await certificate();
        return c.serialNumber.toLowerCase() !== running ? c : undefined;
      },
      200_000,
    );
    const renewedAt = Date.now();
    const state = await eventually("status.certificates to name the replaced certificate", async () => {
      const s = (await readPlatform(client, ns, NAME)).status?.certificates?.["onto-tls"];
      return s?.serial === renewed.serialNumber.toLowerCase() ? s : undefined;
    });
    const old = state.replaced?.find((r) => r.serial === running);
    if (!old) throw new Error(`status.certificates names no replaced certificate ${running}`);
    const waiting = await eventually("the certificate restart to wait", async () =>
      (await readPlatform(client, ns, NAME)).status?.disruption?.waiting?.find(
        (w) => w.workload === `Deployment/${ROLLED}`,
      ),
    );
    expect(waiting).toMatchObject({ cause: "MaintenanceWindow", reasons: ["certificate"] });
    expect(await serialOf(ROLLED)).toBe(running);

    const applied = await eventually(
      `${ROLLED} to roll onto the renewed certificate`,
      async () => ((await serialOf(ROLLED)) === renewed.serialNumber.toLowerCase() ? Date.now() : undefined),
      200_000,
      250,
    );
    const notAfter = Date.parse(old.notAfter);
    const margin = notAfter - Date.parse(old.renewAt);
    figures["certificate: renewal to roll"] = Number(((applied - renewedAt) / 1000).toFixed(1));
    figures["certificate: rolled before expiry"] = Number(((notAfter - applied) / 1000).toFixed(1));
    figures["certificate: half the renewal margin"] = margin / 2000;
    expect(applied).toBeLessThan(notAfter);
    // Not before the emergency point (a second of slack for the clocks' whole seconds).
    expect(applied).toBeGreaterThanOrEqual(notAfter - margin / 2 - 1000);
    const event = await eventually("an EmergencyRestart Event", async () =>
      (await events(client, ns)).find(
        (e) =>
          e.reason === "EmergencyRestart" &&
          e.note?.includes(`Deployment/${ROLLED} runs with certificate ${running}`),
      ),
    );
    expect(event.type).toBe("Warning");
    expect(event.note).toContain(`which expires at ${old.notAfter}`);
    expect(
      auditLines(fx.operator.auditLog, "reconciler").some(
        (l) => l.reason === "EmergencyRestart" && l.object.name === ROLLED,
      ),
    ).toBe(true);
  }, 420_000);

  it("onto approve-restarts shows what waits and lets it go; --revoke makes restarts wait again", async () => {
    // A long lifetime again: issued at once, its restart waits (the running certificate has time).
    await client.mergePatch(platformRef(), { spec: { global: { tls: { certificateLifetime: "2160h" } } } });
    const long = await eventually("the long-lived certificate", async () => {
      const c = await certificate();
      return Date.parse(c.validTo) - Date.now() > 24 * 3600_000 ? c.serialNumber.toLowerCase() : undefined;
    });
    await eventually("its restart to wait", async () =>
      (await readPlatform(client, ns, NAME)).status?.disruption?.waiting?.find(
        (w) => w.workload === `Deployment/${ROLLED}`,
      ),
    );
    const approved = await onto("approve-restarts", NAME, "-n", ns);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/workload\(s\) wait to restart their pods/);
    expect(approved.stdout).toMatch(new RegExp(`Deployment/${ROLLED}\\s+MaintenanceWindow\\s+certificate`));
    const start = Date.now();
    await eventually(`${ROLLED} on the long-lived certificate`, async () =>
      (await serialOf(ROLLED)) === long ? true : undefined,
    );
    figures["approve-restarts to roll"] = since(start);
    expect((await onto("approve-restarts", NAME, "-n", ns, "--revoke")).code).toBe(0);
    await eventually("nothing to wait", async () =>
      ((await readPlatform(client, ns, NAME)).status?.disruption?.waiting ?? []).length === 0
        ? true
        : undefined,
    );
  }, 180_000);

  it("an OOM memory raise waits: status.disruption names it, the memory limit is unchanged", async () => {
    const component = "ontology-service";
    const fault = Date.now();
    await testerClient().mergePatch(deploymentRef(component), {
      spec: { template: { metadata: { labels: { "fault.onto.paas/mode": "oom" } } } },
    });
    try {
      await eventually(
        "the raise to 6Gi in status",
        async () => {
          const o = (await readPlatform(client, ns, NAME)).status?.healing?.memoryOverrides?.[component];
          return o?.memoryLimit === "6Gi" ? o : undefined;
        },
        90_000,
      );
      figures["oom: fault to raise decided"] = since(fault);
      const waiting = await eventually("the raise to wait", async () =>
        (await readPlatform(client, ns, NAME)).status?.disruption?.waiting?.find(
          (w) => w.workload === `Deployment/${component}`,
        ),
      );
      expect(waiting).toMatchObject({ cause: "MaintenanceWindow", reasons: ["resources"] });
      // Held, not late: still 4Gi a while after.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      expect((await container(component))?.resources?.limits?.memory).toBe("4Gi");
      const shown = await onto("status", NAME, "-n", ns);
      expect(shown.stdout).toMatch(new RegExp(`Deployment/${component}\\s+MaintenanceWindow\\s+resources`));
    } finally {
      await testerClient().mergePatch(deploymentRef(component), {
        spec: { template: { metadata: { labels: { "fault.onto.paas/mode": null } } } },
      });
    }
  }, 180_000);

  it("a crash-looping workload's fix is applied at once, with an EmergencyRestart Event", async () => {
    const component = "data-service";
    await testerClient().mergePatch(deploymentRef(component), {
      spec: { template: { metadata: { labels: { "fault.onto.paas/mode": "crashloop" } } } },
    });
    try {
      await eventually(
        "a pod in CrashLoopBackOff",
        async () => {
          const pods = await client.list<
            KubeObject & { status?: { containerStatuses?: { state?: { waiting?: { reason?: string } } }[] } }
          >("v1", "Pod", { namespace: ns, labelSelector: `app.kubernetes.io/name=${component}` });
          return pods.items.some((p) =>
            (p.status?.containerStatuses ?? []).some((c) => c.state?.waiting?.reason === "CrashLoopBackOff"),
          )
            ? true
            : undefined;
        },
        90_000,
      );
      const change = Date.now();
      await client.mergePatch(platformRef(), {
        spec: { dataPlane: { dataService: { resources: { requests: { cpu: "300m", memory: "512Mi" } } } } },
      });
      await eventually("the fix applied", async () =>
        (await container(component))?.resources?.requests?.cpu === "300m" ? true : undefined,
      );
      figures["crash loop: change to apply"] = since(change);
      const event = await eventually("an EmergencyRestart Event", async () =>
        (await events(client, ns)).find(
          (e) => e.reason === "EmergencyRestart" && e.note?.includes(`Deployment/${component} crash-loops`),
        ),
      );
      expect(event.note).toContain("without waiting (MaintenanceWindow)");
    } finally {
      await testerClient().mergePatch(deploymentRef(component), {
        spec: { template: { metadata: { labels: { "fault.onto.paas/mode": null } } } },
      });
    }
  }, 180_000);
});
