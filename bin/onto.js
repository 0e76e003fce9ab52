#!/usr/bin/env node
// Entry point for `onto` and `kubectl onto`: the bundled CLI (dist-bundle/) or the compiled one
// (dist/) when built and fresh (an installed package, the image, a checkout after
// `npm run build`), otherwise the TypeScript source through tsx (a checkout being edited). bin/entry.js says how it decides; set
// ONTO_DEBUG_ENTRY=1 to print which one runs and why.
import { env, stderr } from "node:process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chooseEntry } from "./entry.js";

const entry = chooseEntry(join(dirname(fileURLToPath(import.meta.url)), ".."));
if (env.ONTO_DEBUG_ENTRY) {
  stderr.write(`onto: running ${entry.path}${entry.reason ? ` (${entry.reason})` : ""}\n`);
}
if (!entry.compiled) {
  const { register } = await import("tsx/esm/api");
  register();
}
await import(pathToFileURL(entry.path).href);
