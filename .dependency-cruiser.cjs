// The layers `make lint` enforces (docs/architecture.md draws them). From the bottom:
//   api        the CRD's types, schema and pure rules; imports nothing of ours
//   kube       Kubernetes I/O helpers shared by every process; imports api
//   process    what the three processes share at start (env config, payload codec, metrics
//              server, graceful main); imports api
//   workflows  deterministic workflow code and the activity contract; imports api (and
//              @temporalio/workflow, which nothing else may import)
//   activities implements the contract workflows declares; imports api, kube, workflows
//   trigger    the watch → decide → execute loop; imports api, kube, process
//   cli        the kubectl plugin; imports api, kube, process, and workflows/managed-objects.ts and
//              merge.ts (pure: what a zone's apply is, for `diff` and `plan`), plan.ts, routes.ts and
//              gates.ts (pure: zone order, route removals, where gates hold, for `plan`) (the shapes it
//              reads of a rollout, its result, progress query and queue heartbeat, are
//              api/rollout-contract.ts's)
//   worker     the worker process; imports anything above but trigger and cli
// A process's entry point is worker/main.ts, trigger/main.ts or cli/main.ts. test/, bench/ and
// scripts/ may import anything; no product code imports them. Type-only imports count.
const OURS = '^(api|kube|process|workflows|activities|trigger|cli|worker|test|bench|scripts)/';

/** `name/` may import only `allowed` of ours. */
function layer(name, allowed) {
  return {
    name: `${name}-imports-only-${allowed.join('-') || 'itself'}`,
    comment: `${name}/ may import only ${[...allowed, name].join(', ')} of ours`,
    severity: 'error',
    from: { path: `^${name}/` },
    to: { path: OURS, pathNot: `^(${[name, ...allowed].join('|')})/` },
  };
}
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import cycle: modules that cannot be understood, tested or loaded one without the other',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    layer('api', []),
    layer('kube', ['api']),
    layer('process', ['api']),
    layer('workflows', ['api']),
    layer('activities', ['api', 'kube', 'workflows']),
    layer('trigger', ['api', 'kube', 'process']),
    // …and, of workflows/, only the pure modules that build each zone's VMCluster apply, order the
    // zones, plan route removals and place gates: `kubectl vmdc diff` dry-runs exactly what the
    // workflow would apply, and `kubectl vmdc plan` predicts with the workflow's own functions, not copies.
    {
      ...layer('cli', ['api', 'kube', 'process']),
      to: { path: OURS, pathNot: ['^(cli|api|kube|process)/', '^workflows/(managed-objects|merge|plan|routes|gates)\\.ts$'] },
    },
    layer('worker', ['api', 'kube', 'process', 'workflows', 'activities']),
    {
      name: 'workflows-imports-only-temporal-workflow-packages',
      comment: 'workflow code runs in the deterministic sandbox: no Node APIs, no I/O libraries',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown', 'core'],
        pathNot: '^node_modules/@temporalio/(workflow|common)/',
      },
    },
    {
      name: 'temporal-workflow-only-in-workflows',
      comment: '@temporalio/workflow works only inside the workflow sandbox',
      severity: 'error',
      from: { pathNot: '^(workflows|test|bench|scripts)/' },
      to: { path: '^node_modules/@temporalio/workflow/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that resolves to no file: the check would not see where it goes',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|coverage|\\.tmp|charts)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
