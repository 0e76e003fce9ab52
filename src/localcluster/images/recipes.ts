// The images the real nodes run, as data: where the root filesystem comes from (Debian packages
// installed by mmdebstrap, nothing, or another of these images as a base), which programs built
// here are added, and the image's run configuration. Each image's contract (entrypoint, env, user, paths) is documented in
// docs/development/images.md; render code that runs these images relies on that page only.
import { OPERATOR_IMAGE, RUN_AS_USER } from "../../permissions/index.js";
import {
  COREDNS_VERSION,
  MC_VERSION,
  MINIO_VERSION,
  PAUSE_VERSION,
  TEST_RELEASE_VERSIONS,
} from "./versions.js";

/**
 * A program added to an image: built on this machine (pause, CoreDNS, MinIO, mc, the stand-in),
 * or, for `node`, the Node.js binary that runs the build (see the operator image).
 */
export type ProgramName = "pause" | "coredns" | "minio" | "mc" | "standin" | "node";

/** A folder tree made on this machine: `operator` is the compiled operator with its production node_modules. */
export type TreeName = "operator";

export interface ImageUser {
  name: string;
  uid: number;
  home: string;
  shell?: string;
}

export type RootfsSource =
  | { from: "scratch" }
  | {
      from: "debian";
      suite: "bookworm";
      /** mmdebstrap variant: `minbase` installs the essential set and apt; `extract` only unpacks. */
      variant: "minbase" | "extract";
      packages: string[];
      /** Created before the packages install, so their maintainer scripts reuse these ids. */
      users?: ImageUser[];
      /** Shell lines run after the essential packages, before `packages` (`$1` is the root). */
      beforeInstall?: string[];
      /** Shell lines run last (`$1` is the root). */
      customize?: string[];
    }
  /** Every layer of `base` as it is, plus one layer with this recipe's own files. */
  | { from: "image"; base: ImageRecipe };

/** Run configuration, in the OCI image config's field names. */
export interface ImageRunConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  User?: string;
  WorkingDir?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Labels?: Record<string, string>;
}

export interface ImageRecipe {
  /** Repository part of the reference, e.g. `onto.local/postgres`. */
  name: string;
  tag: string;
  description: string;
  rootfs: RootfsSource;
  files?: { program: ProgramName; path: string }[];
  /** Folder trees copied in, owned by root. */
  trees?: { tree: TreeName; path: string }[];
  /** Small text files written into the image. */
  texts?: { path: string; content: string }[];
  /** Folders created in the image, owned by `owner` (uid:gid) with `mode`. */
  dirs?: { path: string; owner: string; mode: string }[];
  config: ImageRunConfig;
}

/** Every image reference of the project's local images starts with this registry name. */
export const LOCAL_REGISTRY = "onto.local";

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Trimmed from Debian root filesystems: documentation, manual pages and translations. */
export const DEBIAN_EXCLUDES = [
  "path-exclude=/usr/share/doc/*",
  "path-include=/usr/share/doc/*/copyright",
  "path-exclude=/usr/share/man/*",
  "path-exclude=/usr/share/info/*",
  "path-exclude=/usr/share/locale/*",
  "path-exclude=/usr/share/lintian/*",
];

const minioUser: ImageUser = { name: "minio", uid: 1000, home: "/data" };

/** The file and the label that tell the builds of a variant apart (see `variant`). */
export const VARIANT_FILE = "/etc/onto-image-variant";
export const VARIANT_LABEL = "onto.local/variant";

/**
 * The same image under another tag with one small layer more (VARIANT_FILE naming the variant,
 * and VARIANT_LABEL): a different image digest, so a release naming it rolls every pod, without
 * building the base again. The test releases' upgrade uses these (samples/releases/local.yaml).
 */
function variant(base: ImageRecipe, tag: string, name: string): ImageRecipe {
  return {
    name: base.name,
    tag,
    description: `${imageRef(base)} with one layer more: ${VARIANT_FILE} and the label ${VARIANT_LABEL} say "${name}".`,
    rootfs: { from: "image", base },
    texts: [{ path: VARIANT_FILE, content: `${name}\n` }],
    config: { ...base.config, Labels: { ...base.config.Labels, [VARIANT_LABEL]: name } },
  };
}

const [FIRST_TEST_RELEASE, SECOND_TEST_RELEASE] = TEST_RELEASE_VERSIONS;

/**
 * The platform-service stand-in (tools/standin) as a coomia-dip service image: the static binary
 * alone on an empty root, run as 65532 like the platform images, ports 9090 (gRPC health) and 8080.
 */
function standin(service: "auth-service" | "data-service"): ImageRecipe {
  return {
    name: `${LOCAL_REGISTRY}/coomia-dip/${service}`,
    tag: FIRST_TEST_RELEASE,
    description: `The platform-service stand-in (tools/standin, Go, static) as ${service}: ready only while the Postgres, Redis and MinIO its rendered env names answer.`,
    rootfs: { from: "scratch" },
    files: [{ program: "standin", path: "/standin" }],
    config: {
      Entrypoint: ["/standin"],
      User: "65532:65532",
      ExposedPorts: { "9090/tcp": {}, "8080/tcp": {} },
    },
  };
}

const postgres: ImageRecipe = {
  name: `${LOCAL_REGISTRY}/postgres`,
  tag: "15-debian12",
  description: "PostgreSQL 15 from Debian 12's postgresql-15 package; server binaries on PATH, uid 999.",
  rootfs: {
    from: "debian",
    suite: "bookworm",
    variant: "minbase",
    packages: ["postgresql-15"],
    users: [{ name: "postgres", uid: 999, home: "/var/lib/postgresql", shell: "/bin/bash" }],
    // The package would otherwise create and start a cluster `main` at install time.
    beforeInstall: [
      'mkdir -p "$1"/etc/postgresql-common && echo "create_main_cluster = false" > "$1"/etc/postgresql-common/createcluster.conf',
    ],
  },
  dirs: [
    { path: "/var/lib/postgresql/data", owner: "999:999", mode: "0700" },
    { path: "/var/run/postgresql", owner: "999:999", mode: "2777" },
  ],
  config: {
    Cmd: ["postgres"],
    Env: [
      `PATH=/usr/lib/postgresql/15/bin:${DEFAULT_PATH}`,
      "PGDATA=/var/lib/postgresql/data",
      "PG_MAJOR=15",
      "LANG=C.UTF-8",
    ],
    User: "999:999",
    ExposedPorts: { "5432/tcp": {} },
  },
};

const redis: ImageRecipe = {
  name: `${LOCAL_REGISTRY}/redis`,
  tag: "7.0-debian12",
  description:
    "Redis 7.0 and Redis Sentinel from Debian 12's redis-server and redis-sentinel packages; uid 999.",
  rootfs: {
    from: "debian",
    suite: "bookworm",
    variant: "minbase",
    packages: ["redis-server", "redis-sentinel", "redis-tools"],
    users: [{ name: "redis", uid: 999, home: "/var/lib/redis" }],
  },
  dirs: [{ path: "/data", owner: "999:999", mode: "0755" }],
  config: {
    Cmd: ["redis-server"],
    Env: [`PATH=${DEFAULT_PATH}`, "LANG=C.UTF-8"],
    User: "999:999",
    WorkingDir: "/data",
    ExposedPorts: { "6379/tcp": {}, "26379/tcp": {} },
  },
};

const minio: ImageRecipe = {
  name: `${LOCAL_REGISTRY}/minio`,
  tag: `${MINIO_VERSION.split("-")[1] ?? MINIO_VERSION}-debian12`,
  description: `MinIO server (github.com/minio/minio ${MINIO_VERSION}) and mc (github.com/minio/mc ${MC_VERSION}) built from their Go modules, on Debian 12 minbase (bash, coreutils).`,
  rootfs: { from: "debian", suite: "bookworm", variant: "minbase", packages: [], users: [minioUser] },
  files: [
    { program: "minio", path: "/usr/bin/minio" },
    { program: "mc", path: "/usr/bin/mc" },
  ],
  dirs: [{ path: "/data", owner: "1000:1000", mode: "0755" }],
  config: {
    Entrypoint: ["minio"],
    Cmd: ["server", "/data"],
    Env: [`PATH=${DEFAULT_PATH}`, "HOME=/tmp", "MC_CONFIG_DIR=/tmp/.mc"],
    User: "1000:1000",
    WorkingDir: "/data",
    ExposedPorts: { "9000/tcp": {}, "9001/tcp": {} },
  },
};

/**
 * Node.js 20 on Debian 12 minbase (its libc6, libstdc++6 and libgcc-s1 are what the binary links),
 * user nonroot (65532). The binary is the build machine's own Node.js 20: Debian 12's nodejs is
 * 18, on which the operator's API client fails (undici 7 needs the global File; the client calls
 * String.prototype.toWellFormed). The operator image is one layer over this one.
 */
const nodeRuntime: ImageRecipe = {
  name: `${LOCAL_REGISTRY}/node`,
  tag: `${process.versions.node}-debian12`,
  description: `Node.js ${process.version} (the binary that runs the build) on Debian 12 minbase, uid 65532.`,
  rootfs: {
    from: "debian",
    suite: "bookworm",
    variant: "minbase",
    packages: [],
    users: [{ name: "nonroot", uid: RUN_AS_USER, home: "/home/nonroot" }],
  },
  files: [{ program: "node", path: "/usr/local/bin/node" }],
  config: {
    Cmd: ["node"],
    Env: [`PATH=${DEFAULT_PATH}`],
    User: `${RUN_AS_USER}:${RUN_AS_USER}`,
  },
};

const authService = standin("auth-service");
const dataService = standin("data-service");

export const RECIPES = {
  pause: {
    name: `${LOCAL_REGISTRY}/pause`,
    tag: PAUSE_VERSION,
    description:
      "The pod sandbox: Kubernetes' own pause program (build/pause/linux/pause.c), built with gcc -static.",
    rootfs: { from: "scratch" },
    files: [{ program: "pause", path: "/pause" }],
    config: { Entrypoint: ["/pause"], User: "65535:65535" },
  },
  busybox: {
    name: `${LOCAL_REGISTRY}/busybox`,
    tag: "1.35.0-debian12",
    description: "Debian's busybox-static with every applet linked: a shell and the usual tools for tests.",
    rootfs: {
      from: "debian",
      suite: "bookworm",
      variant: "extract",
      packages: ["busybox-static"],
      customize: [
        'mkdir -p "$1"/usr/bin "$1"/usr/sbin "$1"/sbin "$1"/tmp "$1"/etc && chmod 1777 "$1"/tmp',
        // `busybox --install` needs /proc, which the extract variant does not mount: link by list.
        'for applet in $("$1"/bin/busybox --list-full); do [ -e "$1/$applet" ] || ln -s /bin/busybox "$1/$applet"; done',
        'printf "root:x:0:0:root:/root:/bin/sh\\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\\n" > "$1"/etc/passwd',
        'printf "root:x:0:\\nnogroup:x:65534:\\n" > "$1"/etc/group',
      ],
    },
    config: { Cmd: ["sh"], Env: [`PATH=${DEFAULT_PATH}`] },
  },
  coredns: {
    name: `${LOCAL_REGISTRY}/coredns`,
    tag: COREDNS_VERSION.replace(/^v/, ""),
    description:
      "CoreDNS built from its Go module (github.com/coredns/coredns), the cluster DNS of the real nodes.",
    rootfs: { from: "scratch" },
    files: [{ program: "coredns", path: "/coredns" }],
    config: { Entrypoint: ["/coredns"], User: "65532:65532", ExposedPorts: { "53/udp": {}, "53/tcp": {} } },
  },
  postgres,
  redis,
  minio,
  "auth-service": authService,
  "data-service": dataService,
  // The second test release names these: the same programs, different builds.
  "postgres-2": variant(postgres, `${postgres.tag}-2`, "2"),
  "redis-2": variant(redis, `${redis.tag}-2`, "2"),
  "minio-2": variant(minio, `${minio.tag}-2`, "2"),
  "auth-service-2": variant(authService, SECOND_TEST_RELEASE, "2"),
  "data-service-2": variant(dataService, SECOND_TEST_RELEASE, "2"),
  node: nodeRuntime,
  operator: {
    name: `${LOCAL_REGISTRY}/onto-operator`,
    tag: `${OPERATOR_IMAGE.split(":").pop() ?? "dev"}-debian12`,
    description:
      "The operator as the Dockerfile builds it, without a container engine: the compiled JavaScript (npm run build) and its production node_modules in /app, on the node image; uid 65532.",
    rootfs: { from: "image", base: nodeRuntime },
    trees: [{ tree: "operator", path: "/app" }],
    config: {
      Entrypoint: ["node", "dist/cli/main.js"],
      Cmd: ["operator", "--leader-elect", "--metrics-port", "8080", "--health-port", "8081"],
      Env: [`PATH=${DEFAULT_PATH}`, "NODE_ENV=production"],
      User: `${RUN_AS_USER}:${RUN_AS_USER}`,
      WorkingDir: "/app",
      ExposedPorts: { "8080/tcp": {}, "8081/tcp": {} },
    },
  },
} as const satisfies Record<string, ImageRecipe>;

export type ImageName = keyof typeof RECIPES;

/** Full reference of a recipe's image, e.g. `onto.local/postgres:15-debian12`. */
export function imageRef(recipe: ImageRecipe): string {
  return `${recipe.name}:${recipe.tag}`;
}

/** Images every real node gets at start: the sandbox and the cluster DNS. */
export const NODE_IMAGES: readonly ImageName[] = ["pause", "coredns"];

/** The images the first test release of the catalog names that run on the real node, and busybox. */
export const TEST_RELEASE_IMAGES: readonly ImageName[] = [
  "postgres",
  "redis",
  "minio",
  "auth-service",
  "data-service",
  "busybox",
];

/** The images of the second test release (the upgrade's target): variants of the first's. */
export const UPGRADE_RELEASE_IMAGES: readonly ImageName[] = [
  "postgres-2",
  "redis-2",
  "minio-2",
  "auth-service-2",
  "data-service-2",
];

/** Reference of each image by recipe name. */
export const IMAGE_REFS: Readonly<Record<ImageName, string>> = Object.fromEntries(
  Object.entries(RECIPES).map(([key, recipe]) => [key, imageRef(recipe)]),
) as Record<ImageName, string>;
