// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "proto/gen/**",
      "packages/sdk/src/generated/**",
      ".data/**",
      "deploy/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "*.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // The domain core is plain functions and types: no transport, database or broker imports.
    files: ["services/*/src/domain/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@grpc/*", "koa", "@koa/*", "knex", "pg", "nats", "@platform/proto/*"],
              message: "domain code must not depend on transport, database or broker packages",
            },
            {
              // secret-box and random-id: pure computation (AES-GCM over a key ring; ids from a pool
              // of random bytes), no I/O.
              group: [
                "@platform/service-kit/*",
                "!@platform/service-kit/errors",
                "!@platform/service-kit/secret-box",
                "!@platform/service-kit/random-id",
              ],
              message: "domain code may only use @platform/service-kit/errors, /secret-box and /random-id",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["**/*.js"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Files a browser runs as classic scripts (the console's services/gateway/static/*.js, served
    // under script-src 'self'): no modules, and only the browser's globals, named here so that a
    // typo or a Node global (process, Buffer) is an error.
    files: ["services/*/static/**/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: {
        window: "readonly",
        document: "readonly",
        navigator: "readonly",
        location: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        console: "readonly",
      },
    },
    rules: {
      // The TypeScript parser reads import and export in a script too: refuse them here.
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "ImportDeclaration, ImportExpression, ExportNamedDeclaration, ExportDefaultDeclaration, ExportAllDeclaration",
          message: "served as a classic script: no import or export",
        },
      ],
    },
  },
);
