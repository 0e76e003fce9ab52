// The API gateway: the platform's entry point, a platform service routing to the others, and
// its Ingress (host, and TLS with gateway.ingress.tlsSecretName or global.tlsSecretName).
import { ownerOf, type RenderContext } from "./context.js";
import { objectMeta } from "./meta.js";
import type { RenderedObject } from "./objects.js";
import { renderPlatformService } from "./platform-service.js";
import type { ComponentObjects } from "./workload.js";

function ingress(ctx: RenderContext): RenderedObject | undefined {
  const { ingress: spec } = ctx.spec.gateway;
  if (!spec.enabled || !spec.host) return undefined;
  const tlsSecret = spec.tlsSecretName ?? ctx.spec.global.tlsSecretName;
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: objectMeta(ownerOf(ctx, "gateway"), "gateway"),
    spec: {
      ...(spec.className ? { ingressClassName: spec.className } : {}),
      ...(spec.tls && tlsSecret ? { tls: [{ hosts: [spec.host], secretName: tlsSecret }] } : {}),
      rules: [
        {
          host: spec.host,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: "gateway", port: { name: "http" } } },
              },
            ],
          },
        },
      ],
    },
  };
}

export function renderGateway(ctx: RenderContext): ComponentObjects {
  const rendered = renderPlatformService(ctx, "gateway", { needs: ["redis", "services"] });
  const route = ingress(ctx);
  return route ? { ...rendered, objects: [...rendered.objects, route] } : rendered;
}
