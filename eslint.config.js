// ESLint: the recommended rules, typescript-eslint's type-checked ones (each file is checked
// with the types of its own tsconfig.json), and none of the layout rules: layout is Prettier's
// (docs/decisions/0039-lint-and-format.md).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores([
    // Built, installed or written at run time (also in .gitignore).
    'dist/',
    'coverage/',
    'data/',
    'test-results/',
    '.hypothesis/',
    // Generated: the OpenAPI client's types (npm run generate:client).
    'src/client/schema.ts',
  ]),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    rules: {
      // A leading underscore marks what is left out on purpose: a parameter an interface passes
      // (express's `_next`), a field a destructuring drops from the rest.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // An `async` function without `await` is how a Promise-returning interface is implemented here
      // (stubs, handlers, hooks): a throw becomes a rejection, as the caller expects.
      '@typescript-eslint/require-await': 'off',
      // A variable a closure reads before it is set (a timer, an agent session made later) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // The privacy rules and their tests match control characters on purpose, by escape.
      'no-control-regex': 'off',
    },
  },
  {
    // In the tests a response's body and a parsed line are `any` or `unknown` (supertest, JSON.parse) and
    // are read, and stringified, to be compared: a field of the wrong shape fails the expectation that reads it.
    files: ['test/**', 'test-media/**', 'test-cluster/**'],
    rules: {
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript is in no tsconfig.json: the console's modules (run in the browser) and this file.
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['src/console/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ['eslint.config.js'],
    languageOptions: { globals: globals.node },
  },
  prettier,
);
