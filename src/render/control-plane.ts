// Control layer (B): ontology service, schema registry, authentication service.
import type { RenderContext } from "./context.js";
import { renderPlatformService } from "./platform-service.js";
import type { ComponentObjects } from "./workload.js";

export const renderOntologyService = (ctx: RenderContext): ComponentObjects =>
  renderPlatformService(ctx, "ontology-service", { needs: ["postgres", "kafka", "redis"] });

export const renderSchemaRegistry = (ctx: RenderContext): ComponentObjects =>
  renderPlatformService(ctx, "schema-registry", { needs: ["postgres", "kafka"] });

export const renderAuthService = (ctx: RenderContext): ComponentObjects =>
  renderPlatformService(ctx, "auth-service", { needs: ["postgres", "redis"] });
