// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const sdk = {
  group: ['@modelcontextprotocol/*'],
  message: 'The MCP SDK belongs in src/mcp and src/transport only.',
};
const up = (...dirs) =>
  dirs.map((d) => ({
    group: [`../${d}/*`, `../${d}/**`],
    message: `Imports point one way (cli → transport → mcp → runner, console → domain): no import of ${d}/ here.`,
  }));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', 'bench/results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['**/*.js', '**/*.mjs'], languageOptions: { globals: globals.node } },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/cli.ts'],
    rules: {
      'no-console': 'error',
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'stdout',
          message: 'stdout is the protocol: only src/cli may write to it.',
        },
        { object: 'process', property: 'exit', message: 'Only src/cli exits.' },
        { object: 'process', property: 'argv', message: 'Only src/cli reads argv.' },
      ],
    },
  },
  {
    files: ['src/{skills,gate,approvals,envs,sandbox,audit,config}/**/*.ts', 'src/errors.ts', 'src/log.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [sdk, ...up('runner', 'console', 'mcp', 'transport', 'cli')] },
      ],
    },
  },
  {
    files: ['src/runner/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [sdk, ...up('mcp', 'transport', 'cli')] }] },
  },
  {
    files: ['src/console/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [sdk, ...up('mcp', 'transport', 'cli')] }] },
  },
  {
    // Passkeys are a step of the approval console: below it only the domain folders.
    files: ['src/passkeys/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [sdk, ...up('runner', 'mcp', 'transport', 'cli')] }],
    },
  },
  {
    files: ['src/mcp/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: up('transport', 'cli') }] },
  },
  {
    files: ['src/transport/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: up('cli') }] },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
