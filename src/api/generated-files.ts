// The files derived from the schema, by repository path: what `npm run generate` writes and
// what the freshness test compares with the committed copies.
import { ontoPlatformCrdYaml } from "./crd.js";
import { fieldReferenceMarkdown } from "./reference-doc.js";

export function generatedFiles(): Map<string, string> {
  return new Map([
    ["deploy/crds/onto.paas_ontoplatforms.yaml", ontoPlatformCrdYaml()],
    ["docs/reference/ontoplatform.md", fieldReferenceMarkdown()],
  ]);
}
