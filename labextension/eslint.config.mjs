// ESLint (flat config): the recommended rules of ESLint and typescript-eslint for the
// sidebar's TypeScript (src/, test/), the config files, and the plain ES modules of the
// Python package that the card and the sidebar share (../jupyter_approvals/views/*.js,
// ../jupyter_approvals/kernel/card/*.js). `npm run lint` lints those from the repository root
// with this file (`lint:views`), because ESLint ignores files outside a config's directory.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

// What those modules use of the page. They run in the browser only (JupyterLab's page, or
// anywidget's module in a notebook's output); nothing else is global there.
const BROWSER = {
  clearInterval: 'readonly',
  clearTimeout: 'readonly',
  console: 'readonly',
  CustomEvent: 'readonly',
  document: 'readonly',
  MutationObserver: 'readonly',
  ResizeObserver: 'readonly',
  setInterval: 'readonly',
  setTimeout: 'readonly',
  window: 'readonly'
};

export default defineConfig(
  // lib/ is tsc's output; the built bundle lives outside this directory.
  globalIgnores(['lib/', 'node_modules/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `export namespace Widget { export interface IOptions }` next to a class, and
      // `namespace CommandIDs`, are the JupyterLab/Lumino idiom (the extension template turns
      // this rule off too).
      '@typescript-eslint/no-namespace': 'off'
    }
  },
  {
    files: ['**/jupyter_approvals/views/*.js', '**/jupyter_approvals/kernel/card/*.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: BROWSER }
  },
  {
    // The kernel serves the card as one module: views/preview.js, then card.js
    // (kernel/card/widget.py), so card.js calls the renderer without importing it.
    files: ['**/jupyter_approvals/kernel/card/card.js'],
    languageOptions: { globals: { foldTall: 'readonly', renderStructured: 'readonly' } }
  }
);
