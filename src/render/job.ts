// One-shot setup Jobs (MinIO buckets, Kafka topics). A Job's pod template is immutable, so the
// name carries a hash of what it does: a changed bucket list or image gives a new Job (which
// runs), an unchanged one keeps the completed Job (which does not run again). No TTL: a Job
// deleted by TTL would be recreated, and rerun, by the next reconcile.
import { canonicalJson, shortHash } from "./checksum.js";
import { commonLabels, objectMeta, type Owner } from "./meta.js";
import type { RenderedObject } from "./objects.js";
import { hardenedPodSpec, type PodParts, type PodPlacement } from "./workload.js";

export function setupJob(
  owner: Owner,
  baseName: string,
  serviceAccountName: string,
  parts: PodParts,
  placement: PodPlacement,
): RenderedObject {
  // The Job's pods get their own app name so the component's Service never selects them.
  const jobOwner: Owner = { ...owner, component: baseName };
  const podSpec = hardenedPodSpec(parts, placement, jobOwner, serviceAccountName);
  const name = `${baseName}-${shortHash(canonicalJson(podSpec))}`;
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: objectMeta(jobOwner, name),
    spec: {
      backoffLimit: 10,
      template: {
        metadata: { labels: commonLabels(jobOwner) },
        spec: { ...podSpec, restartPolicy: "OnFailure" },
      },
    },
  };
}
