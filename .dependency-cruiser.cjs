// The project's floors, checked by dependency-cruiser (`npm run deps`; src/testing/dependencies.test.ts
// runs the same rules and shows that they catch what they forbid). Data flows up: util → rollout →
// tree → plan → model → objectives → harness → metrics → gpu → run, then present (what the callers
// show people: the methods' colours, the page's ink, durations and progress lines), and on top the
// three callers cli (which may use experiments), experiments and app (README.md, "Repository layout").
// Inside gpu: runtime/ below kernels/<name>/ below the passes (model, score, generate, train).
// Pure logic (everything below gpu) imports no GPU, no DOM and no React. Inside the app: protocols,
// persistence, URL schemas and view models (plain .ts: protocol/, persist/, url/, core/, export/) sit
// below the store, and the store below the React views (.tsx); the store's slices meet only through
// the store (get()), never by importing each other; worker entry points are started, never imported.
// No import cycles, type-only imports included.
// TypeScript 7 has no JavaScript API, so dependency-cruiser reads the sources with TypeScript 5.9's
// (the `typescript` package); type checking runs the native compiler (`typescript-native`).

const CORE = ['util', 'rollout', 'tree', 'plan', 'model', 'objectives', 'harness', 'metrics', 'gpu', 'run', 'present'];
const TOP = ['experiments', 'cli', 'app'];
const TESTS = '(\\.test\\.tsx?|\\.gpu\\.test\\.ts|\\.testing\\.ts)$|^src/testing/';

/** A core floor may import only the floors below it. */
const upward = CORE.map((floor, i) => ({
  name: `${floor}-imports-only-below`,
  comment: `src/${floor} may import only ${CORE.slice(0, i).join(', ') || 'nothing of the project'}`,
  severity: 'error',
  from: { path: `^src/${floor}/`, pathNot: TESTS },
  to: { path: `^src/(${[...CORE.slice(i), ...TOP].join('|')})/`, pathNot: `^src/${floor}/` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'gpu-runtime-below-kernels',
      comment: 'Inside gpu: runtime/ (device, buffers, pipelines, launches) imports no kernel and no pass.',
      severity: 'error',
      from: { path: '^src/gpu/runtime/', pathNot: TESTS },
      to: { path: '^src/gpu/(kernels/|[^/]+$)' },
    },
    {
      name: 'gpu-kernels-below-passes',
      comment: 'Inside gpu: a kernel (kernels/<name>/) imports runtime/ and other kernels, never a pass above them (model, score, generate, train, head).',
      severity: 'error',
      from: { path: '^src/gpu/kernels/', pathNot: TESTS },
      to: { path: '^src/gpu/[^/]+$' },
    },
    {
      name: 'gpu-train-runs-a-planned-step',
      comment:
        "The step is planned once, on the CPU (src/objectives/step.ts): the GPU step imports plan/ and objectives/ for types only, AdamW's schedule aside.",
      severity: 'error',
      from: { path: '^src/gpu/train\\.ts$' },
      to: { path: '^src/(plan|objectives)/', pathNot: '^src/objectives/adamw\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'experiments-not-callers',
      comment: 'experiments is called by cli; it imports no caller.',
      severity: 'error',
      from: { path: '^src/experiments/', pathNot: TESTS },
      to: { path: '^src/(cli|app)/' },
    },
    {
      name: 'app-not-cli',
      comment: 'The app imports neither the command line nor the experiments.',
      severity: 'error',
      from: { path: '^src/app/', pathNot: TESTS },
      to: { path: '^src/(cli|experiments)/' },
    },
    {
      name: 'cli-not-app',
      severity: 'error',
      from: { path: '^src/cli/', pathNot: TESTS },
      to: { path: '^src/app/' },
    },
    {
      name: 'tests-helpers-only-in-tests',
      comment: 'src/testing (fixtures, random weights, comparisons) serves tests only.',
      severity: 'error',
      from: { path: '^src/', pathNot: TESTS },
      to: { path: '^src/testing/' },
    },
    {
      name: 'pure-logic-no-gpu-no-dom',
      comment: 'Below gpu nothing imports a GPU binding, React or the DOM libraries.',
      severity: 'error',
      from: { path: `^src/(${CORE.slice(0, CORE.indexOf('gpu')).join('|')})/`, pathNot: TESTS },
      to: { path: '(^|/)node_modules/(react|react-dom|d3|zustand|webgpu)(/|$)' },
    },
    {
      name: 'app-plain-modules-below-store',
      comment: 'Plain app modules (protocols, persistence, URL schemas, view models) import neither the store nor a view.',
      severity: 'error',
      from: { path: '^src/app/.+\\.ts$', pathNot: `${TESTS}|^src/app/store/|\\.worker\\.ts$` },
      to: { path: '^src/app/(store/|.+\\.tsx$)' },
    },
    {
      name: 'store-below-views',
      comment: 'The store imports no React view.',
      severity: 'error',
      from: { path: '^src/app/store/', pathNot: TESTS },
      to: { path: '^src/app/.+\\.tsx$' },
    },
    {
      name: 'app-floors-below-views',
      comment: "The app's plain floors (protocol, persist, url, core, export) import neither the store nor view code (views/, train/, tour/).",
      severity: 'error',
      from: { path: '^src/app/(protocol|persist|url|core|export)/', pathNot: TESTS },
      to: { path: '^src/app/(views|store|train|tour)/' },
    },
    {
      name: 'slice-imports-no-slice',
      comment: 'A store slice (store/*Slice.ts) imports neither another slice nor the store that assembles them: slices meet through get() (store/types.ts).',
      severity: 'error',
      from: { path: '^src/app/store/[^/]+Slice\\.ts$', pathNot: TESTS },
      to: { path: '^src/app/store/([^/]+Slice|index)\\.ts$' },
    },
    {
      name: 'gpt2-ranks-loaded-lazily',
      comment:
        "gpt2's ranks (~500 KB) load by the registry's dynamic import (src/rollout/tokenizer.ts loadTokenizer), so a bundle that never meets gpt2 does not carry them.",
      severity: 'error',
      from: { pathNot: TESTS },
      to: { path: '^src/rollout/gpt2\\.ts$', dynamic: false },
    },
    {
      name: 'app-workers-are-entry-points',
      comment: 'A worker (*.worker.ts) is started with new Worker(new URL(...)) by its client in protocol/, never imported.',
      severity: 'error',
      from: {},
      to: { path: '\\.worker\\.ts$' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    includeOnly: { path: '^(src|node_modules/(react|react-dom|d3|zustand|webgpu))(/|$)' },
    moduleSystems: ['es6'],
  },
};
