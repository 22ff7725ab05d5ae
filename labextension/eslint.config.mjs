// ESLint (flat config): the recommended rules of ESLint and typescript-eslint for the
// sidebar's TypeScript (src/, test/) and the config files.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

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
  }
);
