export * from "./catalog.js";
export * from "./upgrade-path.js";
