// Cost of reading an OntoPlatform file as `onto validate` and `onto render` do (parse, duplicate
// keys, validation), for files with more and more keys in one map: linear growth is the goal (the
// yaml library's own duplicate-key check is quadratic: 80k keys took 96 s). Pass the root of
// another checkout to measure its src/api/documents.ts instead.
// Run: npx tsx bench/cli-input.ts [checkout]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = resolve(process.argv[2] ?? ".");
const { validateYamlStream } = (await import(pathToFileURL(`${root}/src/api/documents.ts`).href)) as {
  validateYamlStream: (text: string) => unknown[];
};
const header =
  "apiVersion: onto.paas/v1alpha1\nkind: OntoPlatform\nmetadata: { name: p1 }\nspec: { version: 1.5.0 }\n";
console.log(`checkout ${root}`);
for (const keys of [5_000, 10_000, 20_000, 40_000]) {
  const body = Array.from({ length: keys }, (_, i) => `  k${i}: v`).join("\n");
  const text = `${header}extra:\n${body}\n`;
  const started = performance.now();
  validateYamlStream(text);
  const ms = performance.now() - started;
  console.log(
    `${String(keys).padStart(6)} keys ${String(text.length).padStart(8)} bytes ${ms.toFixed(0).padStart(7)} ms`,
  );
}
