// The locally built images keep the contract docs/development/images.md gives them: the programs
// on PATH, the user, the environment. Each runs as a pod on the real node with its own image
// configuration (no command override beyond `sh -c` for the checks), so what a rendered
// manifest can rely on is proven here, not assumed.
import { beforeAll, describe, expect, it } from "vitest";
import type { V1Container } from "@kubernetes/client-node";
import { TEST_RELEASE_IMAGES, type ImageName } from "../../src/localcluster/images/index.js";
import { createTestNamespace, eventually } from "../support/cluster.js";
import { IMAGE_REFS, createPod, kubectl, loadImages, onRealNode, readPod, realNodes } from "./support.js";

let ns = "";

beforeAll(async () => {
  realNodes();
  await loadImages(TEST_RELEASE_IMAGES);
  ns = await createTestNamespace("real-images");
});

/** Runs `script` with the image's own user and environment; resolves with the pod's log. */
async function runIn(image: ImageName, name: string, script: string): Promise<string> {
  const container: V1Container = {
    name: "check",
    image: IMAGE_REFS[image],
    imagePullPolicy: "Never",
    command: ["sh", "-c", script],
  };
  await createPod(ns, name, onRealNode({ restartPolicy: "Never", containers: [container] }));
  const phase = await eventually(
    `${name} finished`,
    async () => {
      const p = (await readPod(ns, name)).status?.phase;
      return p === "Succeeded" || p === "Failed" ? p : undefined;
    },
    120_000,
    500,
  );
  const log = (await kubectl(["logs", "-n", ns, name])).stdout;
  expect(phase, log).toBe("Succeeded");
  return log;
}

describe("locally built images", () => {
  it("postgres: PostgreSQL 15 server programs on PATH, uid 999, PGDATA, and a cluster that starts", async () => {
    const log = await runIn(
      "postgres",
      "pg",
      [
        "set -e",
        "id -u; id -g; echo PGDATA=$PGDATA",
        "postgres --version",
        "for p in postgres initdb pg_ctl pg_basebackup pg_isready pg_rewind psql; do command -v $p; done",
        "initdb -D /tmp/pg -U postgres --auth=trust >/dev/null",
        "pg_ctl -D /tmp/pg -o '-k /tmp -c listen_addresses=' -w start >/dev/null",
        "psql -h /tmp -U postgres -Atc 'select 40 + 2'",
        "pg_ctl -D /tmp/pg -w stop >/dev/null",
      ].join("\n"),
    );
    expect(log).toMatch(/^999\n999\nPGDATA=\/var\/lib\/postgresql\/data\n/);
    expect(log).toMatch(/postgres \(PostgreSQL\) 15\./);
    expect(log).toContain("/usr/lib/postgresql/15/bin/pg_rewind");
    expect(log.trim().split("\n").pop()).toBe("42");
  });

  it("redis: redis-server 7.0, redis-sentinel and redis-cli, uid 999", async () => {
    const log = await runIn(
      "redis",
      "redis",
      [
        "set -e",
        "id -u",
        "redis-server --version",
        "command -v redis-sentinel redis-cli",
        "redis-server --port 6399 --save '' --daemonize yes",
        "sleep 1; redis-cli -p 6399 ping",
      ].join("\n"),
    );
    expect(log).toMatch(/^999\n/);
    expect(log).toMatch(/Redis server v=7\.0\./);
    expect(log).toContain("redis-sentinel");
    expect(log.trim().split("\n").pop()).toBe("PONG");
  });

  it("minio: the minio server and mc on PATH, uid 1000", async () => {
    const log = await runIn(
      "minio",
      "minio",
      ["set -e", "id -u", "minio --version", "mc --version"].join("\n"),
    );
    expect(log).toMatch(/^1000\n/);
    expect(log).toMatch(/minio version/i);
    expect(log).toMatch(/mc version/i);
  });
});
