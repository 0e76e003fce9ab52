// Kafka in KRaft mode: every pod is broker and controller, the controller quorum is every pod
// (addressed through the headless Service), the node id is the pod's ordinal (the pod-index
// label, Kubernetes 1.28+), and the cluster id is generated once into a Secret, since the
// storage of every node is formatted with it. A setup Job creates the spec's topics; a topic's
// partitions may grow, never shrink (Kafka cannot remove partitions), so a smaller number in the
// spec is reported in the Job's log and otherwise left alone.
//
// With global.tlsEnabled every listener speaks TLS with the platform certificate: clients and
// inter-broker traffic on the listener CLIENTS, the controller quorum on CONTROLLER, and brokers
// verify each other's names (kafka-N.kafka-headless.<ns>.svc) against the platform CA. Kafka reads
// a PEM keystore holding the key and the chain in one file, which an init container writes from
// the Secret into memory at each start; so a renewed certificate restarts the brokers, one at a
// time. The listener is not called SSL: the image's start script reads an advertised SSL
// listener as a request for JKS keystores with password files.
import { Quantity, topicReplicationFactor } from "../../api/index.js";
import {
  componentSecret,
  helperResources,
  mainResources,
  ownerOf,
  workloadBase,
  type RenderContext,
  placementFor,
} from "../context.js";
import { KAFKA, podHost } from "../endpoints.js";
import { setupJob } from "../job.js";
import type { RenderedObject } from "../objects.js";
import { secretEnv } from "../secrets.js";
import { TLS_MOUNT, platformTlsSecret, tlsFile, tlsVolume } from "../tls.js";
import { buildWorkload, headlessServiceName, type ComponentObjects } from "../workload.js";

const KAFKA_UID = 1000; // appuser in apache/kafka
const BIN = "/opt/kafka/bin";
/** Where the init container writes the PEM keystore (key, then chain) with TLS. */
const KEYSTORE_DIR = "/etc/kafka/keystore";
const KEYSTORE = `${KEYSTORE_DIR}/keystore.pem`;
/** The properties a client of the TLS listener uses (the topic Job's tools). */
const CLIENT_PROPERTIES = "/tmp/client.properties";

/** The listeners and their protocols: plaintext, or TLS on both. */
function listeners(tls: boolean): { client: string; map: string } {
  return tls
    ? { client: "CLIENTS", map: "CONTROLLER:SSL,CLIENTS:SSL" }
    : { client: "PLAINTEXT", map: "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT" };
}

function topicScript(ctx: RenderContext, tls: boolean): string {
  const kafka = ctx.spec.infrastructure.kafka;
  const bootstrap = `${KAFKA.service}:${KAFKA.port}`;
  const clientTls = tls
    ? [
        `printf 'security.protocol=SSL\\nssl.truststore.type=PEM\\nssl.truststore.location=%s\\n' ${tlsFile("ca")} > ${CLIENT_PROPERTIES}`,
      ]
    : [];
  return [
    "set -eu",
    ...clientTls,
    `T="${BIN}/kafka-topics.sh --bootstrap-server ${bootstrap}${tls ? ` --command-config ${CLIENT_PROPERTIES}` : ""}"`,
    'until $T --list >/dev/null 2>&1; do echo "waiting for Kafka"; sleep 5; done',
    "ensure() {",
    '  name="$1"; want="$2"; rf="$3"',
    '  $T --create --if-not-exists --topic "$name" --partitions "$want" --replication-factor "$rf"',
    `  have="$($T --describe --topic "$name" | awk '{for (i = 1; i < NF; i++) if ($i == "PartitionCount:") { print $(i + 1); exit }}')"`,
    '  if [ "$have" -lt "$want" ]; then',
    '    $T --alter --topic "$name" --partitions "$want"',
    '  elif [ "$have" -gt "$want" ]; then',
    '    echo "topic $name keeps $have partitions: the spec asks $want, and Kafka cannot remove partitions"',
    "  fi",
    "}",
    // Topic names are validated by the schema ([a-zA-Z0-9._-]): safe unquoted.
    ...kafka.topics.map((t) => `ensure ${t.name} ${t.partitions} ${topicReplicationFactor(kafka, t)}`),
  ].join("\n");
}

/** JVM heap flags for a memory limit: half of it, as Xms and Xmx (the broker's page cache gets the rest). */
export function heapOptions(memoryLimit: string | undefined): string {
  const bytes = Quantity.parse(memoryLimit ?? "1Gi").toNumber();
  const mib = Math.max(128, Math.floor(bytes / 2 / 2 ** 20));
  return `-Xms${mib}m -Xmx${mib}m`;
}

export function renderKafka(ctx: RenderContext): ComponentObjects {
  const name = "kafka";
  const settings = ctx.spec.infrastructure.kafka;
  const namespace = ctx.platform.namespace;
  const n = settings.replicas;
  const voters = Array.from(
    { length: n },
    (_, i) => `${i}@${podHost(name, i, namespace)}:${KAFKA.controllerPort}`,
  );
  const replication = String(Math.min(3, n));
  const minInSync = String(Math.min(2, n));
  // A 22-character id of letters and digits is valid base64url for Kafka's 16-byte cluster id.
  const secret = componentSecret(ctx, name, KAFKA.secret, [{ key: KAFKA.clusterIdKey, length: 22 }]);
  const tcp = (port: string) => ({ tcpSocket: { port } });
  const base = workloadBase(ctx, name);
  const resources = mainResources(ctx, name);
  const tlsSecret = platformTlsSecret(ctx);
  const tls = tlsSecret !== undefined;
  const listener = listeners(tls);
  const keystoreMount = { name: "keystore", mountPath: KEYSTORE_DIR };
  const tlsEnv = tls
    ? [
        { name: "KAFKA_SSL_KEYSTORE_TYPE", value: "PEM" },
        { name: "KAFKA_SSL_KEYSTORE_LOCATION", value: KEYSTORE },
        { name: "KAFKA_SSL_TRUSTSTORE_TYPE", value: "PEM" },
        { name: "KAFKA_SSL_TRUSTSTORE_LOCATION", value: tlsFile("ca") },
      ]
    : [];
  const built = buildWorkload(
    {
      ...base,
      ports: [
        { name: "kafka", port: KAFKA.port },
        { name: "controller", port: KAFKA.controllerPort },
      ],
      // The controller quorum needs a majority up before any node is ready: start them together.
      podManagementPolicy: "Parallel",
      volumeClaims: [{ name: "data", storage: settings.storage }],
      volumeRetention: ctx.spec.retentionPolicy.persistentVolumeClaims,
      pod: (image) => ({
        runAsUser: KAFKA_UID,
        fsGroup: KAFKA_UID,
        terminationGracePeriodSeconds: 120,
        ...(tlsSecret
          ? {
              initContainers: [
                {
                  name: "keystore",
                  image,
                  command: [
                    "sh",
                    "-c",
                    `umask 077 && cat ${tlsFile("key")} ${tlsFile("cert")} > ${KEYSTORE}`,
                  ],
                  resources: helperResources("50m", "32Mi"),
                  volumeMounts: [TLS_MOUNT, keystoreMount],
                },
              ],
              volumes: [
                tlsVolume(tlsSecret),
                { name: "keystore", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
              ],
            }
          : {}),
        containers: [
          {
            name,
            image,
            ports: [
              { name: "kafka", containerPort: KAFKA.port },
              { name: "controller", containerPort: KAFKA.controllerPort },
            ],
            env: [
              { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
              {
                name: "KAFKA_NODE_ID",
                valueFrom: { fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" } },
              },
              secretEnv("CLUSTER_ID", KAFKA.secret, KAFKA.clusterIdKey),
              { name: "KAFKA_PROCESS_ROLES", value: "broker,controller" },
              {
                name: "KAFKA_LISTENERS",
                value: `${listener.client}://:${KAFKA.port},CONTROLLER://:${KAFKA.controllerPort}`,
              },
              {
                name: "KAFKA_ADVERTISED_LISTENERS",
                value: `${listener.client}://$(POD_NAME).${headlessServiceName(name)}.${namespace}.svc:${KAFKA.port}`,
              },
              { name: "KAFKA_CONTROLLER_LISTENER_NAMES", value: "CONTROLLER" },
              { name: "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", value: listener.map },
              { name: "KAFKA_INTER_BROKER_LISTENER_NAME", value: listener.client },
              ...tlsEnv,
              { name: "KAFKA_CONTROLLER_QUORUM_VOTERS", value: voters.join(",") },
              { name: "KAFKA_LOG_DIRS", value: "/var/lib/kafka/data/logs" },
              { name: "KAFKA_AUTO_CREATE_TOPICS_ENABLE", value: "false" },
              { name: "KAFKA_DEFAULT_REPLICATION_FACTOR", value: replication },
              { name: "KAFKA_MIN_INSYNC_REPLICAS", value: minInSync },
              { name: "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", value: replication },
              { name: "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", value: replication },
              { name: "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", value: minInSync },
              // The image's default -Xmx1G equals the default limit and leaves nothing for the
              // page cache, threads and metaspace: the heap follows the limit (the healer's too).
              { name: "KAFKA_HEAP_OPTS", value: heapOptions(resources.limits.memory) },
            ],
            resources,
            startupProbe: { ...tcp("kafka"), periodSeconds: 5, failureThreshold: 120 },
            readinessProbe: { ...tcp("kafka"), periodSeconds: 10, failureThreshold: 3 },
            livenessProbe: { ...tcp("controller"), periodSeconds: 20, failureThreshold: 6 },
            volumeMounts: [
              { name: "data", mountPath: "/var/lib/kafka/data" },
              ...(tls ? [TLS_MOUNT, keystoreMount] : []),
            ],
          },
        ],
      }),
    },
    placementFor(ctx, name),
  );
  const objects: RenderedObject[] = [secret, ...built.objects];
  if (settings.topics.length > 0) {
    objects.push(
      setupJob(
        ownerOf(ctx, name),
        "kafka-topics",
        name,
        {
          runAsUser: KAFKA_UID,
          // The certificate's files are readable by the pod's group only.
          ...(tls ? { fsGroup: KAFKA_UID } : {}),
          containers: [
            {
              name: "create-topics",
              image: base.image,
              command: ["sh", "-c", topicScript(ctx, tls)],
              env: [{ name: "KAFKA_HEAP_OPTS", value: "-Xmx256m" }],
              resources: helperResources("200m", "512Mi"),
              ...(tls ? { volumeMounts: [TLS_MOUNT] } : {}),
            },
          ],
          ...(tlsSecret ? { volumes: [tlsVolume(tlsSecret)] } : {}),
        },
        placementFor(ctx, name),
      ),
    );
  }
  return { objects, workload: built.workload };
}
