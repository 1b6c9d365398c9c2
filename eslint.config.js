// ESLint flat config: typed linting of the TypeScript in src, test and bench with the project's tsconfig.json.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    // Build output, benchmark output, AssemblyScript (the scanner, and the WebAssembly writer of a benchmark: compiled by asc, not tsc) and the browser pages.
    ignores: ['dist/', 'bench/out/', 'node_modules/', 'data/', 'test-artifacts/', 'public/', 'src/scan/assembly/', 'bench/wasm-writer/', '*.config.js'],
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }],
      }],
      '@typescript-eslint/no-misused-promises': 'error',
      // `_name` marks a binding kept on purpose (a destructured field dropped from a rest object, a callback's unused parameter).
      '@typescript-eslint/no-unused-vars': ['error', {
        argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_',
      }],
      // Forwarding an abort signal's reason or a caught error unchanged is intended; new rejections are Errors.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // The code builds objects of closures ("no classes where a function serves"): their methods never use `this`,
      // so passing `ctx.logError` or destructuring `{ close }` is safe; the rule would flag that style everywhere.
      '@typescript-eslint/unbound-method': 'off',
      // `async` without `await` is used on purpose where a function implements a Promise-returning interface:
      // it turns a synchronous throw into a rejection.
      '@typescript-eslint/require-await': 'off',
      // A closure may read a `let` that is assigned once, after the closure is made (zstd.ts's memory).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // Tests read parsed JSON (answers, CLI output, glTF documents) as `any` and assert on it; typing every
    // parsed body would be a mass rewrite for no gain, since the assertions check the values themselves.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
