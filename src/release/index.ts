export * from "./catalog.js";
export * from "./image-ref.js";
export * from "./upgrade-path.js";
export { PRODUCT_RELEASES } from "./product-releases.js";
export { releaseObject } from "./objects.js";
export { unknownReleases, versionsInUse } from "./in-use.js";
