// Lint rules for the whole repository: typescript-eslint's type-aware recommended set,
// plus the few rules that keep the layers and the "no any without a reason" standard honest.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "tools/", "coverage/", "charts/", "deploy/"] },
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
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["node:fs*", "node:child_process", "node:net", "node:http*", "fs", "child_process"],
              message: "render/, api/ and release/ are pure: no I/O.",
            },
            {
              group: ["@kubernetes/client-node"],
              message: "render/ builds plain objects; the API client belongs to kube/.",
            },
            {
              group: ["**/kube/**", "**/runtime/**", "**/controllers/**", "**/cli/**"],
              message: "layer rule: render/api/release may not import I/O layers.",
            },
          ],
        },
      ],
      "no-restricted-globals": [
        "error",
        { name: "Date", message: "render/ reads no clock: pass time in." },
        { name: "fetch", message: "no I/O here" },
        { name: "process", message: "no environment here: pass it in" },
      ],
    },
  },
  {
    files: ["bin/**/*.js", "eslint.config.js"],
    ...tseslint.configs.disableTypeChecked,
  },
);
