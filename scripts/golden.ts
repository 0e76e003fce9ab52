// `npm run golden`: rewrites the golden files (src/render/testdata/golden) with what the current
// code renders. Run it after declaring a render change in src/render/template-changes.ts; the
// golden-file test then compares later code with these files.
import { goldenCases, writeGoldenFile } from "../test/support/golden.js";

for (const [name, input] of Object.entries(goldenCases())) {
  writeGoldenFile(name, input);
  process.stdout.write(`wrote src/render/testdata/golden/${name}.yaml\n`);
}
