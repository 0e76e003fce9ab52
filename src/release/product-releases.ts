// The product's releases, as data: what the operator knows built in (so a bare install works) and
// what `npm run generate` writes as OntoRelease objects for the chart and the kustomize base.
// Platform services are built by the coomia-dip project and tagged with the platform version
// under the platform's spec.global.imageRegistry; infrastructure images are third-party and
// pinned, so a platform version always means the same bits. Postgres stays on one major line
// across the product's releases because a major Postgres upgrade needs pg_upgrade, not an image
// swap. Upgrade graph: each release is reached from the previous minor line (and its own
// earlier patches); skipping a minor line or going down needs force.
import { PLATFORM_SERVICES, type ResolvedReleaseSpec } from "../api/index.js";

type Images = ResolvedReleaseSpec["images"];
type Infrastructure = Omit<Images, (typeof PLATFORM_SERVICES)[number]>;

/** Every platform service tagged `tag` under the platform's registry. */
function services(tag: string): Omit<Images, keyof Infrastructure> {
  return Object.fromEntries(PLATFORM_SERVICES.map((s) => [s, { tag }])) as Omit<Images, keyof Infrastructure>;
}

const DOWNGRADE = "a downgrade: later releases may have changed data the older one cannot read";

const TEMPORAL_SCHEMA =
  "Temporal's auto-setup updates its schema in Postgres when the first pod of the new version starts; the older Temporal cannot run on the newer schema";

export const PRODUCT_RELEASES: readonly ResolvedReleaseSpec[] = [
  {
    version: "1.4.2",
    overrideBuiltIn: false,
    images: {
      postgres: { repository: "postgres", tag: "16.3" },
      redis: { repository: "redis", tag: "7.2.4" },
      minio: { repository: "minio/minio", tag: "RELEASE.2024-05-10T01-41-38Z" },
      "minio-client": { repository: "minio/mc", tag: "RELEASE.2024-05-09T17-04-24Z" },
      kafka: { repository: "apache/kafka", tag: "3.7.0" },
      nessie: { repository: "ghcr.io/projectnessie/nessie", tag: "0.83.2" },
      temporal: { repository: "temporalio/auto-setup", tag: "1.23.1" },
      ...services("1.4.2"),
    },
    upgradeFrom: [
      { versions: ">=1.4.0 <1.4.2", path: "Allowed" },
      { versions: ">1.4.2", path: "ForceRequired", reason: DOWNGRADE },
    ],
    irreversible: [],
  },
  {
    version: "1.5.0",
    overrideBuiltIn: false,
    images: {
      postgres: { repository: "postgres", tag: "16.4" },
      redis: { repository: "redis", tag: "7.2.5" },
      minio: { repository: "minio/minio", tag: "RELEASE.2024-08-17T01-24-54Z" },
      "minio-client": { repository: "minio/mc", tag: "RELEASE.2024-08-17T11-33-50Z" },
      kafka: { repository: "apache/kafka", tag: "3.7.1" },
      nessie: { repository: "ghcr.io/projectnessie/nessie", tag: "0.95.0" },
      temporal: { repository: "temporalio/auto-setup", tag: "1.24.2" },
      ...services("1.5.0"),
    },
    upgradeFrom: [
      { versions: ">=1.4.0 <1.5.0", path: "Allowed" },
      { versions: "<1.4.0", path: "ForceRequired", reason: "skips the 1.4 line and its migrations" },
      { versions: ">1.5.0", path: "ForceRequired", reason: DOWNGRADE },
    ],
    irreversible: [],
  },
  {
    version: "1.6.0",
    overrideBuiltIn: false,
    images: {
      postgres: { repository: "postgres", tag: "16.6" },
      redis: { repository: "redis", tag: "7.4.1" },
      minio: { repository: "minio/minio", tag: "RELEASE.2024-11-07T00-52-20Z" },
      "minio-client": { repository: "minio/mc", tag: "RELEASE.2024-11-05T11-29-45Z" },
      kafka: { repository: "apache/kafka", tag: "3.8.1" },
      nessie: { repository: "ghcr.io/projectnessie/nessie", tag: "0.99.0" },
      temporal: { repository: "temporalio/auto-setup", tag: "1.25.2" },
      ...services("1.6.0"),
    },
    upgradeFrom: [
      { versions: ">=1.5.0 <1.6.0", path: "Allowed" },
      { versions: "<1.5.0", path: "ForceRequired", reason: "skips the 1.5 line and its migrations" },
      { versions: ">1.6.0", path: "ForceRequired", reason: DOWNGRADE },
    ],
    irreversible: [{ component: "temporal", step: "Canary", reason: TEMPORAL_SCHEMA }],
  },
  {
    // A patch release: only the platform services and Redis move.
    version: "1.6.1",
    overrideBuiltIn: false,
    images: {
      postgres: { repository: "postgres", tag: "16.6" },
      redis: { repository: "redis", tag: "7.4.2" },
      minio: { repository: "minio/minio", tag: "RELEASE.2024-11-07T00-52-20Z" },
      "minio-client": { repository: "minio/mc", tag: "RELEASE.2024-11-05T11-29-45Z" },
      kafka: { repository: "apache/kafka", tag: "3.8.1" },
      nessie: { repository: "ghcr.io/projectnessie/nessie", tag: "0.99.0" },
      temporal: { repository: "temporalio/auto-setup", tag: "1.25.2" },
      ...services("1.6.1"),
    },
    upgradeFrom: [
      { versions: ">=1.5.0 <1.6.1", path: "Allowed" },
      { versions: "<1.5.0", path: "ForceRequired", reason: "skips the 1.5 line and its migrations" },
      { versions: ">1.6.1", path: "ForceRequired", reason: DOWNGRADE },
    ],
    irreversible: [],
  },
  {
    version: "1.7.0",
    overrideBuiltIn: false,
    images: {
      postgres: { repository: "postgres", tag: "16.8" },
      redis: { repository: "redis", tag: "7.4.2" },
      minio: { repository: "minio/minio", tag: "RELEASE.2025-01-20T14-49-07Z" },
      "minio-client": { repository: "minio/mc", tag: "RELEASE.2025-01-17T23-25-50Z" },
      kafka: { repository: "apache/kafka", tag: "3.9.0" },
      nessie: { repository: "ghcr.io/projectnessie/nessie", tag: "0.102.2" },
      temporal: { repository: "temporalio/auto-setup", tag: "1.26.2" },
      ...services("1.7.0"),
    },
    upgradeFrom: [
      { versions: ">=1.6.0 <1.7.0", path: "Allowed" },
      { versions: "<1.6.0", path: "ForceRequired", reason: "skips the 1.6 line and its migrations" },
      { versions: ">1.7.0", path: "ForceRequired", reason: DOWNGRADE },
    ],
    irreversible: [{ component: "temporal", step: "Canary", reason: TEMPORAL_SCHEMA }],
  },
];
