// The JavaScript linter (`make lint`, CI): ESLint's recommended rules, which find real problems
// (undefined or unused names, unreachable code, a misspelt global), not style: the app's own browser
// modules and the node tests of the pure ones. Third-party code (node_modules, Chart.js served as
// vendor/, collected static files) is not ours to lint.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "staticfiles/", "**/vendor/", ".venv/", "test-artifacts/"] },
  js.configs.recommended,
  {
    files: ["frontend/static/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.browser } },
  },
  {
    // Chart.js is loaded as a classic script before the dashboards' charts (frontend/vendor.py).
    files: ["frontend/static/dashboards/charts.js"],
    languageOptions: { globals: { Chart: "readonly" } },
  },
  {
    // The find worker is a classic worker script: the worker's globals, no imports.
    files: ["frontend/static/frontend/js/find_worker.js"],
    languageOptions: { sourceType: "script", globals: { ...globals.worker } },
  },
  {
    files: ["tests/js/**/*.mjs", "eslint.config.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.node } },
  },
];
