import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { validateCommand } from "./validate.js";

async function run(...files: string[]): Promise<{ output: string; exitCode: number | undefined }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
  try {
    await validateCommand().parseAsync(["-f", ...files], { from: "user" });
  } finally {
    log.mockRestore();
  }
  const exitCode = process.exitCode === undefined ? undefined : Number(process.exitCode);
  return { output: stripVTControlCharacters(lines.join("\n")), exitCode };
}

afterEach(() => {
  process.exitCode = undefined;
});

describe("onto validate (offline)", () => {
  it("passes the valid samples with exit code 0", async () => {
    const { output, exitCode } = await run("samples/production.yaml", "samples/tenant.yaml");
    expect(exitCode).toBeUndefined();
    expect(output).toContain("onto-system/onto-production");
    expect(output).toContain("tenant-alpha/tenant-alpha");
  });

  it("checks OntoRelease documents against the OntoRelease schema", async () => {
    const { output, exitCode } = await run("samples/releases/local.yaml");
    expect(exitCode).toBeUndefined();
    expect(output).toContain("valid   samples/releases/local.yaml: OntoRelease/1.5.0-local.1");
    expect(output).toContain("OntoRelease/1.5.0-local.2");
  });

  it("names the field of an invalid OntoRelease and exits 1", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "onto-validate-")), "release.yaml");
    writeFileSync(
      file,
      "apiVersion: onto.paas/v1alpha1\nkind: OntoRelease\nmetadata: { name: r1 }\n" +
        "spec: { version: 2.0.0, upgradeFrom: [], images: { postgres: { tag: 16 } } }\n",
    );
    const { output, exitCode } = await run(file);
    expect(exitCode).toBe(1);
    expect(output).toContain("OntoRelease/r1:");
    expect(output).toContain("spec.images.postgres.tag: Expected string");
    expect(output).toContain("spec.images.redis: Required value");
  });

  it("prints each error with its field path and exits 1", async () => {
    const { output, exitCode } = await run("samples/invalid/kafka-replication-above-replicas.yaml");
    expect(exitCode).toBe(1);
    expect(output).toContain(
      "spec.infrastructure.kafka.topics: a topic's replicationFactor cannot exceed the Kafka replicas",
    );
  });

  it("checks a repeated platform as an update of the earlier document", async () => {
    const { output, exitCode } = await run("samples/invalid/storage-shrinks.yaml");
    expect(exitCode).toBe(1);
    expect(output).toContain("storage-shrinks (update): 1 error");
    expect(output).toContain("spec.infrastructure.postgres.storage: storage cannot shrink");
  });

  it("refuses a file it cannot read, naming it", async () => {
    await expect(run("samples/no-such-file.yaml")).rejects.toThrow("cannot read samples/no-such-file.yaml");
  });
});
