// The project's floors, checked by dependency-cruiser (`npm run deps`; src/testing/dependencies.test.ts
// runs the same rules and shows that they catch what they forbid). Data flows up: util → rollout →
// tree → plan → model → objectives → harness → metrics → gpu → run, then present (what the callers
// show people: the methods' colours, the page's ink, durations and progress lines), and on top the
// three callers cli (which may use experiments), experiments and app (README.md, "Repository layout").
// Inside gpu: runtime/ below kernels/<name>/ below the passes (model, score, generate, train).
// A kernel's float64 reference (kernels/<name>/<name>.reference.ts) sits beside its WGSL but is plain
// math: it imports no GPU code, and the floors below gpu may read it (the float64 GPT-2 and family
// models in src/model compose the op references). Those the model floor reads import only util and
// other such references; the objectives' (loss-grad, kl-sdcc, adamw) also read the objectives'
// definitions, so only the objectives' floor and above read them.
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
const KERNEL_REFERENCE = '^src/gpu/kernels/[^/]+/[^/]+\\.reference\\.ts$';
/** The kernels whose references read the objectives' definitions (targets, pairs, hyperparameters). */
const OBJECTIVE_KERNEL_REFERENCE = '^src/gpu/kernels/(loss-grad|kl-sdcc|adamw)/[^/]+\\.reference\\.ts$';

/** A core floor may import only the floors below it. */
const upward = CORE.map((floor, i) => ({
  name: `${floor}-imports-only-below`,
  comment: `src/${floor} may import only ${CORE.slice(0, i).join(', ') || 'nothing of the project'}`,
  severity: 'error',
  from: { path: `^src/${floor}/`, pathNot: TESTS },
  to: { path: `^src/(${[...CORE.slice(i), ...TOP].join('|')})/`, pathNot: `^src/${floor}/|${KERNEL_REFERENCE}` },
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
      name: 'kernel-references-are-plain-math',
      comment:
        "A kernel's float64 reference imports no GPU code and nothing above gpu: util, other references, and (for the objectives' kernels) the objectives' definitions.",
      severity: 'error',
      from: { path: KERNEL_REFERENCE },
      to: { path: `^src/(gpu|${['run', 'present', ...TOP].join('|')})/|(^|/)node_modules/(react|react-dom|d3|zustand|webgpu)(/|$)`, pathNot: KERNEL_REFERENCE },
    },
    {
      name: 'model-references-read-only-util',
      comment:
        "The references the model floor composes (every kernel but the objectives' three) import only util and each other, so the model floor stays below the objectives.",
      severity: 'error',
      from: { path: KERNEL_REFERENCE, pathNot: OBJECTIVE_KERNEL_REFERENCE },
      to: { path: '^src/', pathNot: `^src/util/|${KERNEL_REFERENCE}` },
    },
    {
      name: 'objective-references-above-the-objectives',
      comment: "The objectives' kernel references read src/objectives: nothing below the objectives imports them.",
      severity: 'error',
      from: { path: `^src/(${CORE.slice(0, CORE.indexOf('objectives') + 1).join('|')})/`, pathNot: TESTS },
      to: { path: OBJECTIVE_KERNEL_REFERENCE },
    },
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
