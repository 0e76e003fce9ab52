// Lint rules for the whole repository: typescript-eslint's type-aware recommended set,
// plus the few rules that keep the layers and the "no any without a reason" standard honest.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** Every folder of src/ that is a layer, and the layers each may import (README.md, "Layout"). */
const LAYERS = {
  api: [],
  release: ["api"],
  render: ["api", "release"],
  kube: [],
  runtime: ["kube"],
  controllers: ["api", "release", "render", "kube", "runtime"],
  permissions: ["api", "release", "render", "kube"],
  localcluster: ["api", "kube", "permissions"],
  cli: ["api", "release", "render", "kube", "runtime", "controllers", "permissions", "localcluster"],
};
/** Layers whose modules the CLI may still import one by one (they have no index.ts yet). */
const WITHOUT_INDEX = ["localcluster"];
/** Pure layers: no I/O and no API client (render's output is what `onto render` prints). */
const PURE = ["api", "release", "render"];
const PURE_PATTERNS = [
  {
    group: ["node:fs*", "node:child_process", "node:net", "node:http*", "fs", "child_process"],
    message: "render/, api/ and release/ are pure: no I/O.",
  },
  {
    group: ["@kubernetes/client-node"],
    message: "render/ builds plain objects; the API client belongs to kube/.",
  },
];
/** Controller folders: siblings meet through shared/ or each other's index.ts. */
const CONTROLLER_FOLDERS = ["platform", "healing", "upgrade", "releases"];

/** An import of `layer` from anywhere below src/<other>/ ("../api/x.js", "../../api/x.js"). */
const into = (names, rest = "(/|$)") => `^(\\.\\./)+(${names.join("|")})${rest}`;

function layerRules() {
  const all = Object.keys(LAYERS);
  return Object.entries(LAYERS).map(([layer, allowed]) => {
    const forbidden = all.filter((l) => l !== layer && !allowed.includes(l));
    const surfaced = allowed.filter((l) => !WITHOUT_INDEX.includes(l));
    const patterns = [
      ...(PURE.includes(layer) ? PURE_PATTERNS : []),
      ...(forbidden.length > 0
        ? [
            {
              regex: into(forbidden),
              message: `layer rule: ${layer}/ imports ${allowed.length > 0 ? `only ${allowed.join(", ")}` : "nothing of ours"}.`,
            },
          ]
        : []),
      ...(surfaced.length > 0
        ? [
            {
              regex: into(surfaced, "/(?!index\\.js$)"),
              message: "import another layer through its index.ts, its public surface.",
            },
          ]
        : []),
    ];
    if (layer === "controllers") {
      const sibling = `(${CONTROLLER_FOLDERS.join("|")})/(?!index\\.js$)`;
      patterns.push(
        { regex: `^\\.\\./${sibling}`, message: "controllers meet through shared/ or a sibling's index.ts." },
        { regex: `^\\./${sibling}`, message: "the wiring uses each controller folder's index.ts." },
      );
    }
    return {
      files: [`src/${layer}/**/*.ts`],
      ignores: ["**/*.test.ts"],
      rules: { "no-restricted-imports": ["error", { patterns }] },
    };
  });
}

export default tseslint.config(
  { ignores: ["dist/", "dist-bundle/", "node_modules/", "tools/", "coverage/", "charts/", "deploy/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/require-await": "off",
      "no-console": "off",
    },
  },
  {
    files: ["src/render/**/*.ts", "src/api/**/*.ts", "src/release/**/*.ts"],
    // Tests beside these modules may read fixtures and committed files; the code they test may not.
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-globals": [
        "error",
        { name: "Date", message: "render/ reads no clock: pass time in." },
        { name: "fetch", message: "no I/O here" },
        { name: "process", message: "no environment here: pass it in" },
      ],
    },
  },
  // The layers (README.md, "Layout"): which folder of src/ may import which, and
  // only through the other folder's public surface (its index.ts). Tests beside a module are not
  // a layer (they may reach into what they test); test/ is not linted by these rules.
  ...layerRules(),
  {
    files: ["bin/**/*.js", "eslint.config.js"],
    ...tseslint.configs.disableTypeChecked,
  },
);
