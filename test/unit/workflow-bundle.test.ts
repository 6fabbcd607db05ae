// The modules the workflow bundle shares between workflows (process/workflow-bundle.ts PRELOAD_MODULES)
// are evaluated once per worker thread and deep-frozen by the SDK, which cannot freeze a Map, a Set or
// a `let`: state of that kind there would leak from one rollout to the next, silently. Nor may they
// reach @temporalio/workflow, whose module state is per workflow. Checked on the sources, with the
// TypeScript parser, over every module a preloaded one imports (they are preloaded with it).
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { PRELOAD_MODULES, workflowBundleOptions } from '../../process/workflow-bundle';

const MUTABLE_CONSTRUCTORS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet']);

/** Why a module's top level could hold per-workflow state, and the modules it imports. */
function inspectModule(fileName: string, text: string): { problems: string[]; imports: string[] } {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const problems: string[] = [];
  const imports: string[] = [];
  const line = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visitInitializer = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && MUTABLE_CONSTRUCTORS.has(node.expression.text)) {
      problems.push(`${fileName}:${line(node)}: a module-level ${node.expression.text}`);
    }
    if (ts.isRegularExpressionLiteral(node) && /\/[a-z]*[gy][a-z]*$/.test(node.text)) {
      problems.push(`${fileName}:${line(node)}: a module-level stateful RegExp (g or y flag)`);
    }
    // Functions run per call, their locals are not module state.
    if (!ts.isFunctionLike(node)) ts.forEachChild(node, visitInitializer);
  };
  for (const statement of source.statements) {
    if (
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      const typeOnly = ts.isImportDeclaration(statement) ? statement.importClause?.isTypeOnly : statement.isTypeOnly;
      if (!typeOnly) imports.push(statement.moduleSpecifier.text);
    } else if (ts.isVariableStatement(statement)) {
      if (!(statement.declarationList.flags & ts.NodeFlags.Const)) problems.push(`${fileName}:${line(statement)}: a module-level let/var`);
      for (const d of statement.declarationList.declarations) if (d.initializer) visitInitializer(d.initializer);
    } else if (ts.isClassDeclaration(statement)) {
      for (const m of statement.members) {
        if (ts.isPropertyDeclaration(m) && m.modifiers?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword)) {
          problems.push(`${fileName}:${line(m)}: a static class field`);
        }
      }
    } else if (ts.isExpressionStatement(statement)) {
      visitInitializer(statement.expression);
    }
  }
  return { problems, imports };
}

/** Every module of ours a preloaded module loads (itself included), and what is wrong with each. */
function closure(entries: readonly string[]): { files: string[]; packages: Set<string>; problems: string[] } {
  const files: string[] = [];
  const packages = new Set<string>();
  const problems: string[] = [];
  const todo = [...entries];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (files.includes(file)) continue;
    if (!file.endsWith('.ts')) {
      packages.add(file);
      continue;
    }
    files.push(file);
    const found = inspectModule(path.relative(process.cwd(), file), fs.readFileSync(file, 'utf8'));
    problems.push(...found.problems);
    for (const spec of found.imports) todo.push(spec.startsWith('.') ? require.resolve(path.resolve(path.dirname(file), spec)) : spec);
  }
  return { files, packages, problems };
}

describe('the modules shared by every workflow of a worker thread', () => {
  const preloaded = closure(PRELOAD_MODULES.filter((m) => m.endsWith('.ts')));

  test('keep no state between calls and do not load @temporalio/workflow', () => {
    expect(preloaded.problems).toEqual([]);
    expect([...preloaded.packages]).not.toContain('@temporalio/workflow');
    // @temporalio/common (preloaded as a package) is the only package they reach.
    expect([...preloaded.packages].filter((p) => !PRELOAD_MODULES.includes(require.resolve(p)))).toEqual([]);
  });

  test('are all listed: a module one of them imports is preloaded with it, so it is named here too', () => {
    expect(preloaded.files.filter((f) => !PRELOAD_MODULES.includes(f))).toEqual([]);
  });

  test('are in every bundle of the rollout workflow', () => {
    expect(workflowBundleOptions().preloadModules).toEqual(PRELOAD_MODULES);
    expect(workflowBundleOptions('/converter.js')).toMatchObject({ failureConverterPath: '/converter.js', preloadModules: PRELOAD_MODULES });
  });

  test('the check sees what would leak (negative control)', () => {
    const leaky = [
      "import { proxyActivities } from '@temporalio/workflow';",
      'let calls = 0;',
      'const seen = new Map<string, number>();',
      'const ids = [new Set()];',
      'const TOKEN = /x/g;',
      'export class Cache { static last = 1; }',
      'export const fine = () => new Map();',
    ].join('\n');
    const found = inspectModule('leaky.ts', leaky);
    expect(found.imports).toEqual(['@temporalio/workflow']);
    expect(found.problems).toEqual([
      'leaky.ts:2: a module-level let/var',
      'leaky.ts:3: a module-level Map',
      'leaky.ts:4: a module-level Set',
      'leaky.ts:5: a module-level stateful RegExp (g or y flag)',
      'leaky.ts:6: a static class field',
    ]);
  });
});
