import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadKubeConfig } from "./config.js";

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: { server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true }
- name: two
  cluster: { server: "https://10.0.0.2:6443", insecure-skip-tls-verify: true }
users:
- name: admin
  user: { token: "secret-token" }
contexts:
- name: first
  context: { cluster: one, user: admin }
- name: second
  context: { cluster: two, user: admin }
current-context: first
`;

describe("loadKubeConfig", () => {
  const dir = mkdtempSync(join(tmpdir(), "onto-kubeconfig-"));
  const path = join(dir, "config");
  writeFileSync(path, kubeconfig);

  it("loads an explicit file and its current context", () => {
    expect(loadKubeConfig({ path }).getCurrentCluster()?.server).toBe("https://127.0.0.1:6443");
  });

  it("switches to a named context", () => {
    expect(loadKubeConfig({ path, context: "second" }).getCurrentCluster()?.server).toBe(
      "https://10.0.0.2:6443",
    );
  });

  it("names the missing file or context", () => {
    expect(() => loadKubeConfig({ path: join(dir, "nope") })).toThrow(
      /kubeconfig: file .*nope does not exist/,
    );
    expect(() => loadKubeConfig({ path, context: "third" })).toThrow(/context third not found/);
  });
});
