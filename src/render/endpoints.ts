// Names and ports by which components reach one another. Families create these Services and
// Secrets; platform services receive them in their ConfigMaps and env.
export const POSTGRES = {
  service: "postgres",
  readOnlyService: "postgres-ro",
  port: 5432,
  secret: "postgres-credentials",
  passwordKey: "password",
  replicationPasswordKey: "replication-password",
  user: "onto",
  database: "onto",
  /** A member streams through the replication slot named this plus its ordinal. */
  slotPrefix: "standby_",
  /** Databases the first start creates besides `database`. */
  extraDatabases: ["nessie"],
  /**
   * The server settings the spec decides that a member takes on without a restart: they come
   * from a file of the ConfigMap (not the command line, not the pod template's checksum), and the
   * operator reloads a member whose file holds a value it does not run yet (pg_reload_conf()).
   * Each must have context sighup in pg_settings.
   */
  reloadableSettings: ["max_slot_wal_keep_size"],
} as const;

export const REDIS = {
  service: "redis",
  port: 6379,
  sentinelPort: 26379,
  secret: "redis-credentials",
  passwordKey: "password",
  /** The Sentinel name of the monitored primary. */
  masterName: "onto-primary",
} as const;

export const MINIO = {
  service: "minio",
  port: 9000,
  consolePort: 9001,
  secret: "minio-credentials",
  userKey: "root-user",
  passwordKey: "root-password",
} as const;

export const KAFKA = {
  service: "kafka",
  port: 9092,
  controllerPort: 9093,
  secret: "kafka-cluster",
  clusterIdKey: "cluster-id",
} as const;

export const NESSIE = { service: "nessie", port: 19120, managementPort: 9000 } as const;

export const TEMPORAL = { service: "temporal", port: 7233, metricsPort: 8000, namespace: "default" } as const;

/** DNS name of one StatefulSet pod through its headless Service, resolvable from any namespace. */
export function podHost(component: string, ordinal: number, namespace: string): string {
  return `${component}-${ordinal}.${component}-headless.${namespace}.svc`;
}

/** DNS name of a Service, resolvable from any namespace. */
export function serviceHost(service: string, namespace: string): string {
  return `${service}.${namespace}.svc`;
}
