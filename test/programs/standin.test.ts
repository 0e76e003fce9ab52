// The platform-service stand-in (tools/standin) with the env the operator renders for a platform
// service that needs PostgreSQL and Redis (auth-service), against the rendered Postgres and Redis
// Sentinel pods run as processes on loopback: Ready while both answer, not Ready while the
// Postgres primary is down, Ready again when it is back; Redis found through the Sentinels.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSpec } from "../../src/api/index.js";
import { releaseFor } from "../../src/release/index.js";
import { renderPlatform, type RenderedObject } from "../../src/render/index.js";
import {
  PodProcess,
  find,
  secretValue,
  systemUser,
  translate,
  until,
  type Translation,
} from "./pod-process.js";

const NS = "onto-programs";
const pgIp = "127.0.4.10";
const redisIp = (o: number): string => `127.0.4.${20 + o}`;
const STANDIN_HTTP = 18080;
let root = "";
let objects: RenderedObject[] = [];
let postgres: PodProcess;
const redis: PodProcess[] = [];
let standin: ChildProcess | undefined;
let standinLog = "";

function renderObjects(): RenderedObject[] {
  const spec = resolveSpec({
    version: "1.5.0",
    infrastructure: { postgres: { replicas: 1 }, redis: { replicas: 3, mode: "sentinel" } },
  });
  return renderPlatform({
    platform: { name: "onto-programs", namespace: NS, uid: "00000000-0000-0000-0000-000000000003" },
    spec,
    release: releaseFor(spec.version),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ key, length }) =>
      `${key}0123456789abcdefghijklmnopqrstuvwxyz0123456789`.slice(0, length),
  });
}

const pods = (): PodProcess[] => [postgres, ...redis];

/** The stand-in's env as the auth-service pod would have it: its ConfigMap and its Secret refs. */
function serviceEnv(table: readonly Translation[]): Record<string, string> {
  const config =
    (find(objects, "ConfigMap", "auth-service-config") as { data?: Record<string, string> }).data ?? {};
  const deployment = find(objects, "Deployment", "auth-service") as {
    spec?: {
      template: {
        spec: {
          containers: {
            env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
          }[];
        };
      };
    };
  };
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const [k, v] of Object.entries(config)) env[k] = translate(v, table);
  for (const e of deployment.spec?.template.spec.containers[0]?.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) env[e.name] = secretValue(objects, ref.name, ref.key);
  }
  return { ...env, HTTP_PORT: String(STANDIN_HTTP), GRPC_PORT: "19090", CHECK_INTERVAL: "500ms" };
}

async function readyz(): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${STANDIN_HTTP}/readyz`)).status;
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "onto-standin-"));
  chmodSync(root, 0o755);
  objects = renderObjects();
  const build = spawnSync("go", ["build", "-o", join(root, "standin"), "."], {
    cwd: join(import.meta.dirname, "../../tools/standin"),
    env: { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-buildvcs=false" },
    encoding: "utf8",
  });
  if (build.status !== 0) throw new Error(`go build tools/standin: ${build.stderr}`);
  postgres = new PodProcess({
    objects,
    workload: "postgres",
    container: "postgres",
    ordinal: 0,
    dir: join(root, "postgres-0"),
    user: systemUser("postgres"),
    binPath: "/usr/lib/postgresql/15/bin",
    translations: [
      // The harness has no cluster DNS: the headless Service lists the one member, which is this one.
      [`getent ahostsv4 postgres-headless.${NS}.svc | awk '{print $1}' | sort -u`, `echo ${pgIp}`],
      [`getent ahostsv4 "$HOSTNAME" | awk 'NR == 1 {print $1}'`, `echo ${pgIp}`],
      ["listen_addresses=*", `listen_addresses=${pgIp}`],
      ["127.0.0.1", pgIp],
    ],
  });
  postgres.start();
  await until("postgres-0 Ready", () => postgres.probe("readinessProbe"), 60_000, pods());
  for (const o of [0, 1, 2]) {
    const hosts = [0, 1, 2].map((i): Translation => [`redis-${i}.redis-headless.${NS}.svc`, redisIp(i)]);
    for (const container of ["redis", "sentinel"]) {
      const p = new PodProcess({
        objects,
        workload: "redis",
        container,
        ordinal: o,
        dir: join(root, `redis-${o}`),
        user: systemUser("redis"),
        translations: [...hosts, ["bind * -::*", `bind ${redisIp(o)}`], ["127.0.0.1", redisIp(o)]],
      });
      p.start();
      redis.push(p);
    }
    const server = redis[redis.length - 2];
    await until(`redis-${o} Ready`, () => server?.probe("readinessProbe") ?? false, 60_000, pods());
  }
  // The Services, as the pod resolves them: `postgres` is the primary, `redis:26379` any Sentinel.
  const table: Translation[] = [
    ["postgres", pgIp],
    ["redis:26379", `${redisIp(0)}:26379,${redisIp(1)}:26379,${redisIp(2)}:26379`],
  ];
  const env = serviceEnv(table);
  standinLog = join(root, "standin.log");
  const log = createWriteStream(standinLog);
  standin = spawn(join(root, "standin"), [], { env, stdio: ["ignore", "pipe", "pipe"] });
  standin.stdout?.pipe(log);
  standin.stderr?.pipe(log);
}, 600_000);

afterAll(async () => {
  standin?.kill("SIGTERM");
  await Promise.all(pods().map((p) => p?.stop(10_000)));
  if (root && !process.env.ONTO_KEEP_PROGRAMS) rmSync(root, { recursive: true, force: true });
});

describe("the platform-service stand-in on the rendered wiring", () => {
  it("reads the rendered env: Postgres through `postgres`, Redis through the Sentinels", async () => {
    await until("the stand-in Ready", async () => (await readyz()) === 200, 60_000, pods());
    const started = readFileSync(standinLog, "utf8").split("\n")[0] ?? "";
    expect(JSON.parse(started)).toMatchObject({
      service: "auth-service",
      dependencies: ["postgres", "redis"],
    });
  });

  it("is not Ready while Postgres is down, and Ready again when it is back", async () => {
    await postgres.stop();
    await until("the stand-in not Ready", async () => (await readyz()) === 503, 30_000, pods());
    const body = await (await fetch(`http://127.0.0.1:${STANDIN_HTTP}/readyz`)).text();
    expect(body).toMatch(/^postgres: /m);
    postgres.start();
    await until("the stand-in Ready again", async () => (await readyz()) === 200, 60_000, pods());
  });
});
