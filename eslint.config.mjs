// Flat config: typescript-eslint recommended for all TypeScript sources, and vmrollout's own rule
// against plain-object maps in the product (eslint-rules/plain-object-maps.mjs).
import tseslint from 'typescript-eslint';
import plainObjectMaps from './eslint-rules/plain-object-maps.mjs';

/** Plain-object maps whose keys are the program's own, never outside input. */
const OWN_KEY_MAPS = [
  { file: 'activities/index.ts', name: 'wrapped', reason: 'keyed by the activity functions vmrollout declares' },
  { file: 'api/crd.ts', name: 'props', reason: "the CRD schema's property names: vmrollout's own zod schema, at build time" },
  { file: 'api/crd.ts', name: 'out', reason: "JSON Schema keywords of vmrollout's own zod schema, at build time" },
  { file: 'api/crd.ts', name: 'ordered', reason: 'a fixed list of JSON Schema keywords' },
  { file: 'api/normalize.ts', name: 'obj', reason: 'read under the declared field names of the Shape tables only' },
  { file: 'api/validate.ts', name: 'out', reason: 'keyed by the strategy duration fields (DURATION_RULES)' },
  { file: 'cli/temporal.ts', name: 'merged', reason: 'keyed by the TEMPORAL_* variables FLAG_OF names' },
  { file: 'trigger/metrics.ts', name: 'stateGauges', reason: 'keyed by the state metric names statusSeries emits' },
];

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'dist/**', 'coverage/**', 'charts/**', 'test/fixtures/histories/**', '.tmp/**', '.tmp-*', '**/*.d.ts'],
  },
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['{activities,api,cli,kube,process,trigger,worker,workflows}/**/*.ts'],
    plugins: { vmrollout: { rules: { 'no-plain-object-map': plainObjectMaps } } },
    rules: { 'vmrollout/no-plain-object-map': ['error', { allow: OWN_KEY_MAPS }] },
  },
  {
    files: ['**/*.{js,cjs}'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module' },
  },
);
