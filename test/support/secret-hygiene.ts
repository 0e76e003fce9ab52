// Secret hygiene, checked at the end of every suite that runs the operator: no value of a Secret
// the operator generated may appear in what the operator emitted (its log, its audit log), in the
// Events of the watched namespaces, or in any OntoPlatform's status. A leak fails the suite and
// names the Secret, key and place, never the value.
import { readFileSync } from "node:fs";
import type { KubeClient, KubeObject } from "../../src/kube/index.js";

/** Shorter values (e.g. a database name) are not credentials and would match by chance. */
const MIN_LENGTH = 8;

export interface HygieneReport {
  values: number;
  sources: number;
}

export async function assertNoSecretLeaks(
  client: KubeClient,
  namespaces: string[],
  files: string[],
): Promise<HygieneReport> {
  const scopes = namespaces.length > 0 ? namespaces : [undefined];
  const secrets: { where: string; value: string }[] = [];
  const sources: { name: string; text: string }[] = files.map((f) => {
    let text = "";
    try {
      text = readFileSync(f, "utf8");
    } catch {
      // a file the operator never wrote to holds nothing
    }
    return { name: f, text };
  });
  for (const namespace of scopes) {
    const opts = namespace ? { namespace } : {};
    const generated = await client.list<KubeObject & { data?: Record<string, string> }>("v1", "Secret", {
      ...opts,
      labelSelector: "onto.paas/generated-secret=true",
    });
    for (const s of generated.items) {
      for (const [key, encoded] of Object.entries(s.data ?? {})) {
        const value = Buffer.from(encoded, "base64").toString("utf8");
        if (value.length >= MIN_LENGTH)
          secrets.push({ where: `${s.metadata?.namespace}/${s.metadata?.name}[${key}]`, value });
      }
    }
    const events = await client.list("events.k8s.io/v1", "Event", opts);
    sources.push({ name: `Events in ${namespace ?? "all namespaces"}`, text: JSON.stringify(events.items) });
    const platforms = await client.list<KubeObject & { status?: unknown }>(
      "onto.paas/v1alpha1",
      "OntoPlatform",
      opts,
    );
    sources.push({
      name: `OntoPlatform status in ${namespace ?? "all namespaces"}`,
      text: JSON.stringify(platforms.items.map((p) => p.status)),
    });
  }
  const leaks = secrets.flatMap((s) =>
    sources.filter((src) => src.text.includes(s.value)).map((src) => `${s.where} in ${src.name}`),
  );
  if (leaks.length > 0) throw new Error(`generated secret values leaked: ${leaks.join("; ")}`);
  return { values: secrets.length, sources: sources.length };
}
