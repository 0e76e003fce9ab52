// The files derived from the schema, by repository path: what `npm run generate` writes and
// what the freshness test compares with the committed copies.
import { ontoPlatformCrdYaml } from "./crd.js";
import { ontoReleaseCrdYaml } from "./release-crd.js";
import { fieldReferenceMarkdown, releaseReferenceMarkdown } from "./reference-doc.js";

export function generatedFiles(): Map<string, string> {
  return new Map([
    ["deploy/crds/onto.paas_ontoplatforms.yaml", ontoPlatformCrdYaml()],
    ["docs/reference/ontoplatform.md", fieldReferenceMarkdown()],
    ["deploy/crds/onto.paas_ontoreleases.yaml", ontoReleaseCrdYaml()],
    ["docs/reference/ontorelease.md", releaseReferenceMarkdown()],
  ]);
}
