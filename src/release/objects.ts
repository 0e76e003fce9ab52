// A release as the OntoRelease object the chart and the kustomize base ship (named after its version).
import { API_VERSION, RELEASE_KIND, type OntoRelease, type ResolvedReleaseSpec } from "../api/index.js";

export function releaseObject(spec: ResolvedReleaseSpec): OntoRelease {
  return {
    apiVersion: API_VERSION,
    kind: RELEASE_KIND,
    metadata: {
      name: spec.version,
      labels: { "app.kubernetes.io/name": "onto-operator", "app.kubernetes.io/part-of": "coomia-dip" },
    },
    spec,
  };
}
