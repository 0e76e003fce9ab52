// The render context: the input plus what every family derives from it the same way
// (owner metadata, images per upgrade step, resources with healing overrides, the common
// WorkloadInput fields), so no family repeats those rules.
import {
  MAX_PLATFORM_NAME,
  componentByName,
  componentSpec,
  type ComponentInfo,
  type ComponentName,
} from "../api/index.js";
import { imageFor, releaseFor } from "../release/index.js";
import type { RenderInput } from "./input.js";
import type { Owner } from "./meta.js";
import type { ResourceRequirements } from "./objects.js";
import { completeResources, withAppliedRequests } from "./resources.js";
import { generatedSecret, type SecretKeySpec } from "./secrets.js";
import type { PodPlacement, WorkloadInput } from "./workload.js";
import type { RenderedObject } from "./objects.js";

export interface RenderContext extends RenderInput {
  placement: PodPlacement;
}

export function createContext(input: RenderInput): RenderContext {
  if (input.platform.name.length > MAX_PLATFORM_NAME) {
    // The name is the app.kubernetes.io/instance label of every object, and label values stop at
    // 63. The CRD refuses such names; this guards platforms stored before it did.
    throw new Error(
      `metadata.name: "${input.platform.name}" is ${input.platform.name.length} characters; a platform name may have at most ${MAX_PLATFORM_NAME} (it is used as a label value)`,
    );
  }
  const g = input.spec.global;
  return {
    ...input,
    placement: {
      imagePullPolicy: g.imagePullPolicy,
      imagePullSecrets: [...g.imagePullSecrets],
      storageClass: g.storageClass,
      nodeSelector: { ...g.nodePool.nodeSelector },
      tolerations: g.nodePool.tolerations.map(asStored),
    },
  };
}

/**
 * A toleration as the API server stores it: an empty value is omitted (omitempty), so it is
 * rendered absent and the object read back equals the object applied (no drift on every pass).
 */
function asStored<T extends { value?: string | undefined }>({
  value,
  ...rest
}: T): Omit<T, "value"> & { value?: string } {
  return value ? { ...rest, value } : rest;
}

/**
 * Where a component's pods go: spec.global.nodePool with the component's own nodePool over it.
 * The component's nodeSelector keys replace the platform's values for the same keys and add the
 * others (so a component moves to another pool by setting the platform's pool key); its
 * tolerations are added to the platform's (a toleration only allows, never requires).
 */
export function placementFor(ctx: RenderContext, name: ComponentName): PodPlacement {
  const own = componentSpec(ctx.spec, info(name)).nodePool;
  if (!own) return ctx.placement;
  const tolerations = [...ctx.placement.tolerations];
  for (const t of own.tolerations.map(asStored)) {
    if (!tolerations.some((have) => JSON.stringify(have) === JSON.stringify(t))) tolerations.push(t);
  }
  return {
    ...ctx.placement,
    nodeSelector: { ...ctx.placement.nodeSelector, ...own.nodeSelector },
    tolerations,
  };
}

/** Label value of a plane, in the kebab case labels usually use. */
export function planeLabel(plane: string): string {
  return plane.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function info(name: ComponentName): ComponentInfo {
  const found = componentByName(name);
  if (!found) throw new Error(`render: unknown component ${name}`);
  return found;
}

/** The version a component's main workload runs: the upgrade step's, else spec.version. */
export function versionOf(ctx: RenderContext, name: ComponentName): string {
  return ctx.upgrade?.[name]?.version ?? ctx.spec.version;
}

/** The image of `name` (a component, or an image role such as "minio-client") at a version. */
export function imageAt(ctx: RenderContext, name: string, version: string): string {
  const release = version === ctx.release.version ? ctx.release : (ctx.releaseOf ?? releaseFor)(version);
  const { imageRegistry, imageMirror } = ctx.spec.global;
  return imageFor(release, name, { registry: imageRegistry, mirror: imageMirror });
}

export function ownerOf(ctx: RenderContext, name: ComponentName): Owner {
  const component = info(name);
  return {
    platform: ctx.platform,
    component: name,
    plane: planeLabel(component.plane),
    version: versionOf(ctx, name),
  };
}

/** Owner of objects that belong to the platform as a whole (tenancy, observability). */
export function platformOwner(ctx: RenderContext, component: string): Owner {
  return { platform: ctx.platform, component, plane: component, version: ctx.spec.version };
}

/**
 * The main container's resources: spec, completed, with the healer's memory override on top and
 * the requests applied from the VerticalPodAutoscaler's recommendation (mode Apply).
 */
export function mainResources(
  ctx: RenderContext,
  name: ComponentName,
  extra?: Record<string, string>,
): ResourceRequirements {
  const component = info(name);
  const spec = componentSpec(ctx.spec, component).resources;
  const field = `spec.${component.specPath.join(".")}.resources`;
  // Defaults for a limit the spec leaves out; completeResources raises them to at least the
  // request. Half a core keeps the seed's tenant platform (section 6: limits.cpu 20) inside its
  // quota with room for a rolling update's surge pods.
  const fallback: ResourceRequirements = {
    requests: { cpu: "100m", memory: "128Mi" },
    limits: { cpu: "500m", memory: "1Gi" },
  };
  const resources = completeResources(
    withAppliedRequests(spec, ctx.vertical?.[name]?.applied),
    fallback,
    field,
    ctx.overrides?.[name],
  );
  if (extra) {
    Object.assign(resources.requests, extra);
    Object.assign(resources.limits, extra);
  }
  return resources;
}

/** Fixed resources for helper containers (sidecars, init containers, Jobs). */
export function helperResources(cpu: string, memory: string): ResourceRequirements {
  return { requests: { cpu, memory }, limits: { cpu, memory } };
}

/**
 * The WorkloadInput fields every component computes the same way: replicas, autoscaling,
 * gRPC, image and upgrade rollout. Families add pods, ports, config and storage.
 */
export function workloadBase(
  ctx: RenderContext,
  name: ComponentName,
): Pick<
  WorkloadInput,
  "owner" | "kind" | "replicas" | "autoscaling" | "grpc" | "image" | "canary" | "partition"
> {
  const component = info(name);
  const settings = componentSpec(ctx.spec, component);
  const rollout = ctx.upgrade?.[name];
  const version = versionOf(ctx, name);
  const autoscaling = settings.autoscaling?.enabled
    ? {
        minReplicas: settings.autoscaling.minReplicas,
        maxReplicas: settings.autoscaling.maxReplicas,
        targetCPUUtilization: settings.autoscaling.targetCPUUtilization,
        behavior: settings.autoscaling.behavior,
      }
    : undefined;
  return {
    owner: ownerOf(ctx, name),
    kind: component.kind,
    replicas: settings.replicas,
    autoscaling,
    // The Pods metric only resolves through a custom metrics adapter (see Capabilities).
    grpc: component.grpc && ctx.capabilities.customMetrics === true,
    image: imageAt(ctx, name, version),
    ...(rollout?.canaryVersion
      ? { canary: { image: imageAt(ctx, name, rollout.canaryVersion), version: rollout.canaryVersion } }
      : {}),
    ...(rollout?.partition !== undefined ? { partition: rollout.partition } : {}),
  };
}

/** A generated Secret of a component, reusing stored values; owned only under retention Delete. */
export function componentSecret(
  ctx: RenderContext,
  name: ComponentName,
  secretName: string,
  keys: readonly SecretKeySpec[],
): RenderedObject {
  return generatedSecret(
    ownerOf(ctx, name),
    secretName,
    keys,
    ctx.existingSecrets ?? {},
    ctx.generateSecret,
    ctx.spec.retentionPolicy.secrets,
  );
}
