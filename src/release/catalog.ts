// The release catalog: which image every component runs in each platform version.
// Platform services are built by the coomia-dip project and tagged with the platform
// version under the user's registry; infrastructure images are third-party and pinned here,
// so a platform version always means the same bits. Postgres stays on one major line across
// the catalog because a major Postgres upgrade needs pg_upgrade, not an image swap.

/** Third-party images a platform version pins (the key is the image's role, not a component). */
export const INFRASTRUCTURE_IMAGES = [
  "postgres",
  "redis",
  "minio",
  "minio-client",
  "kafka",
  "nessie",
  "temporal",
] as const;
export type InfrastructureImage = (typeof INFRASTRUCTURE_IMAGES)[number];

/** Services built by the platform itself: `<registry>/<name>:<version>`. */
export const PLATFORM_SERVICES = [
  "ontology-service",
  "schema-registry",
  "auth-service",
  "data-service",
  "reasoning-service",
  "agent-runtime",
  "gateway",
] as const;
export type PlatformService = (typeof PLATFORM_SERVICES)[number];

export interface Release {
  /** The platform version (semver, no leading "v"). */
  readonly version: string;
  readonly infrastructure: Readonly<Record<InfrastructureImage, string>>;
}

const RELEASES: readonly Release[] = [
  {
    version: "1.4.2",
    infrastructure: {
      postgres: "postgres:16.3",
      redis: "redis:7.2.4",
      minio: "minio/minio:RELEASE.2024-05-10T01-41-38Z",
      "minio-client": "minio/mc:RELEASE.2024-05-09T17-04-24Z",
      kafka: "apache/kafka:3.7.0",
      nessie: "ghcr.io/projectnessie/nessie:0.83.2",
      temporal: "temporalio/auto-setup:1.23.1",
    },
  },
  {
    version: "1.5.0",
    infrastructure: {
      postgres: "postgres:16.4",
      redis: "redis:7.2.5",
      minio: "minio/minio:RELEASE.2024-08-17T01-24-54Z",
      "minio-client": "minio/mc:RELEASE.2024-08-17T11-33-50Z",
      kafka: "apache/kafka:3.7.1",
      nessie: "ghcr.io/projectnessie/nessie:0.95.0",
      temporal: "temporalio/auto-setup:1.24.2",
    },
  },
  {
    version: "1.6.0",
    infrastructure: {
      postgres: "postgres:16.6",
      redis: "redis:7.4.1",
      minio: "minio/minio:RELEASE.2024-11-07T00-52-20Z",
      "minio-client": "minio/mc:RELEASE.2024-11-05T11-29-45Z",
      kafka: "apache/kafka:3.8.1",
      nessie: "ghcr.io/projectnessie/nessie:0.99.0",
      temporal: "temporalio/auto-setup:1.25.2",
    },
  },
  {
    // A patch release: only the platform services and Redis move.
    version: "1.6.1",
    infrastructure: {
      postgres: "postgres:16.6",
      redis: "redis:7.4.2",
      minio: "minio/minio:RELEASE.2024-11-07T00-52-20Z",
      "minio-client": "minio/mc:RELEASE.2024-11-05T11-29-45Z",
      kafka: "apache/kafka:3.8.1",
      nessie: "ghcr.io/projectnessie/nessie:0.99.0",
      temporal: "temporalio/auto-setup:1.25.2",
    },
  },
  {
    version: "1.7.0",
    infrastructure: {
      postgres: "postgres:16.8",
      redis: "redis:7.4.2",
      minio: "minio/minio:RELEASE.2025-01-20T14-49-07Z",
      "minio-client": "minio/mc:RELEASE.2025-01-17T23-25-50Z",
      kafka: "apache/kafka:3.9.0",
      nessie: "ghcr.io/projectnessie/nessie:0.102.2",
      temporal: "temporalio/auto-setup:1.26.2",
    },
  },
];

/** Every platform version the catalog knows, oldest first. */
export const KNOWN_VERSIONS: readonly string[] = RELEASES.map((r) => r.version);

export function releaseFor(version: string): Release {
  const release = RELEASES.find((r) => r.version === version);
  if (!release) {
    throw new Error(
      `spec.version: platform version "${version}" is not in the release catalog (known: ${KNOWN_VERSIONS.join(", ")})`,
    );
  }
  return release;
}

/** Component (Kubernetes name) -> the pinned image role it runs; platform services are absent. */
const INFRASTRUCTURE_OF_COMPONENT: Readonly<Record<string, InfrastructureImage>> = {
  postgres: "postgres",
  redis: "redis",
  minio: "minio",
  kafka: "kafka",
  nessie: "nessie",
  temporal: "temporal",
};

function isPlatformService(name: string): name is PlatformService {
  return (PLATFORM_SERVICES as readonly string[]).includes(name);
}

function isInfrastructureImage(name: string): name is InfrastructureImage {
  return (INFRASTRUCTURE_IMAGES as readonly string[]).includes(name);
}

/**
 * The image a component runs in a release. `name` is a component's Kubernetes name or an
 * infrastructure image role (e.g. "minio-client" for the bucket Job); `registry` is
 * spec.global.imageRegistry, used for platform services only.
 */
export function imageFor(release: Release, name: string, registry: string): string {
  const role = INFRASTRUCTURE_OF_COMPONENT[name] ?? (isInfrastructureImage(name) ? name : undefined);
  if (role) return release.infrastructure[role];
  if (isPlatformService(name)) return `${registry.replace(/\/+$/, "")}/${name}:${release.version}`;
  throw new Error(`release ${release.version}: no image for component "${name}"`);
}

/** Every name imageFor accepts as a component (platform services and infrastructure components). */
export const CATALOG_COMPONENTS: readonly string[] = [
  ...Object.keys(INFRASTRUCTURE_OF_COMPONENT),
  ...PLATFORM_SERVICES,
];

/** Where the operator looks releases up: the product catalog, or one with extra releases. */
export interface ReleaseCatalog {
  releaseFor(version: string): Release;
  /** Every version the catalog knows. */
  readonly versions: readonly string[];
}

export const PRODUCT_CATALOG: ReleaseCatalog = { releaseFor, versions: KNOWN_VERSIONS };

/**
 * The product catalog plus `extra` releases: dependency injection for tests that need versions
 * whose images fail on purpose (the product catalog never holds such versions).
 */
export function catalogWith(
  extra: readonly Release[],
  base: ReleaseCatalog = PRODUCT_CATALOG,
): ReleaseCatalog {
  return {
    versions: [...base.versions, ...extra.map((r) => r.version)],
    releaseFor: (version) => extra.find((r) => r.version === version) ?? base.releaseFor(version),
  };
}
