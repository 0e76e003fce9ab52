// Images built here for the real nodes: build them (cached) and load them into every real node
// of a running local cluster. The test harness and the demo call `ensureImages`.
import { realNodeRuntimes } from "../launcher.js";
import { buildImage, type BuiltImage } from "./build.js";
import { loadImage } from "./load.js";
import { RECIPES, type ImageName } from "./recipes.js";

export { buildImage, imagesCacheDir, type BuiltImage } from "./build.js";
export {
  IMAGE_REFS,
  LOCAL_REGISTRY,
  NODE_IMAGES,
  RECIPES,
  TEST_RELEASE_IMAGES,
  UPGRADE_RELEASE_IMAGES,
  VARIANT_FILE,
  VARIANT_LABEL,
  imageRef,
} from "./recipes.js";
export type { ImageName, ImageRecipe } from "./recipes.js";

export interface EnsureImagesOptions {
  /** State folder of the running cluster whose real nodes receive the images. */
  stateDir: string;
  progress?: (line: string) => void;
}

/**
 * Builds each image (once; later calls find it in the cache) and imports it into every real
 * node of the cluster in `stateDir` that does not hold this build yet. Builds run one after
 * the other (2 cores). Returns the images by name.
 */
export async function ensureImages(
  names: readonly ImageName[],
  opts: EnsureImagesOptions,
): Promise<Record<string, BuiltImage>> {
  const progress = opts.progress ?? (() => undefined);
  const runtimes = realNodeRuntimes(opts.stateDir);
  if (runtimes.length === 0)
    throw new Error(`the cluster in ${opts.stateDir} has no real nodes (onto cluster up --real-nodes 1)`);
  const built: Record<string, BuiltImage> = {};
  for (const name of names) {
    const image = await buildImage(RECIPES[name], progress);
    built[name] = image;
    for (const runtime of runtimes) {
      const started = Date.now();
      if (loadImage(runtime, image))
        progress(
          `loaded ${image.ref} into ${runtime.node} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
    }
  }
  return built;
}
