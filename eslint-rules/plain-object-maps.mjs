// ESLint rule vmrollout/no-plain-object-map: no plain object (`{}`, an object literal,
// Object.fromEntries) used as a map under keys that are not constants. Such keys come from what other
// people write (free-form specs, annotations, label and pod names), where `__proto__`, `constructor`
// and `prototype` are legal: a write under `__proto__` replaces the object's prototype, or, through
// one more level, sets a key on Object.prototype for the whole process; a read or an `in` finds keys
// nobody stored. Maps are Map or api/data-object.ts's dataObject() (or Object.create(null)).
//
// Without type information the rule follows where the map object comes from, syntactically, through
// variables (every assignment to them), casts, `a ?? b`, `c ? a : b` and a reduce's initial value: a
// computed access `m[k]` (written, read or tested with `k in m`) whose `m` may be a plain object and
// whose `k` is not a constant is reported, and so is `m[k] = {}` / `m[k] ??= {}` (an empty plain
// object stored under such a key is a map to come). A key is a constant when it is a literal, a
// `const` bound to one or to Symbol(), or named in SCREAMING_CASE. A map whose keys are the
// program's own (never outside input) is listed in the option `allow` with the reason.

const CASTS = new Set(['TSAsExpression', 'TSSatisfiesExpression', 'TSNonNullExpression', 'TSTypeAssertion', 'ChainExpression']);
const CONSTANT_NAME = /^[A-Z][A-Z0-9_]*$/;

function unwrap(node) {
  let n = node;
  while (n && CASTS.has(n.type)) n = n.expression;
  return n;
}

/** The variable an identifier names, from the scope it is used in outwards. */
function variableOf(scope, name) {
  for (let s = scope; s; s = s.upper) {
    const v = s.set.get(name);
    if (v) return v;
  }
  return undefined;
}

/** Origins, from safest: 'data' (no prototype), 'unknown', 'plain' (a plain object: may be). */
const worst = (a, b) => (a === 'plain' || b === 'plain' ? 'plain' : a === 'data' && b === 'data' ? 'data' : 'unknown');

function isCall(node, object, property) {
  const c = node.callee;
  return c.type === 'MemberExpression' && !c.computed && c.object.type === 'Identifier' && c.object.name === object && c.property.name === property;
}

function create(context) {
  const options = context.options[0] ?? {};
  const factories = new Set(options.factories ?? ['dataObject']);
  const allow = options.allow ?? [];
  const sourceCode = context.sourceCode;
  const filename = context.filename.replaceAll('\\', '/');

  function constantKey(node, scope) {
    const n = unwrap(node);
    if (n.type === 'Literal') return true;
    if (n.type === 'TemplateLiteral') return n.expressions.length === 0;
    if (n.type === 'MemberExpression' && !n.computed && n.object.type === 'Identifier') return CONSTANT_NAME.test(n.object.name);
    if (n.type !== 'Identifier') return false;
    if (CONSTANT_NAME.test(n.name)) return true;
    const def = variableOf(scope, n.name)?.defs[0];
    if (!def || def.type !== 'Variable' || def.parent.kind !== 'const' || !def.node.init) return false;
    const init = unwrap(def.node.init);
    return init.type === 'Literal' || (init.type === 'CallExpression' && init.callee.type === 'Identifier' && init.callee.name === 'Symbol');
  }

  function origin(node, scope, seen) {
    const n = unwrap(node);
    if (!n) return 'unknown';
    switch (n.type) {
      case 'ObjectExpression':
        return 'plain';
      case 'CallExpression':
        if (isCall(n, 'Object', 'create')) return n.arguments[0]?.type === 'Literal' && n.arguments[0].value === null ? 'data' : 'unknown';
        if (n.callee.type === 'Identifier' && factories.has(n.callee.name)) return 'data';
        if (isCall(n, 'Object', 'fromEntries')) return 'plain';
        if (isCall(n, 'Object', 'assign')) return origin(n.arguments[0], scope, seen);
        return 'unknown';
      case 'ConditionalExpression':
        return worst(origin(n.consequent, scope, seen), origin(n.alternate, scope, seen));
      case 'LogicalExpression':
        return worst(origin(n.left, scope, seen), origin(n.right, scope, seen));
      case 'AssignmentExpression':
        return n.operator === '=' ? origin(n.right, scope, seen) : worst(origin(n.left, scope, seen), origin(n.right, scope, seen));
      case 'SequenceExpression':
        return origin(n.expressions[n.expressions.length - 1], scope, seen);
      case 'Identifier':
        return variableOrigin(variableOf(scope, n.name), seen);
      default:
        return 'unknown';
    }
  }

  /** The worst origin of everything a variable is ever bound to. */
  function variableOrigin(variable, seen) {
    if (!variable) return 'unknown';
    if (seen.has(variable)) return 'data'; // neutral: the other bindings decide
    seen.add(variable);
    let o = 'data';
    for (const def of variable.defs) {
      const scope = variable.scope;
      if (def.type === 'Variable' && def.node.init) o = worst(o, origin(def.node.init, scope, seen));
      else if (def.type === 'Variable') o = worst(o, /^For(In|Of)Statement$/.test(def.parent.parent.type) ? 'unknown' : 'data');
      else if (def.type === 'Parameter') o = worst(o, parameterOrigin(def, scope, seen));
      else o = worst(o, 'unknown');
    }
    for (const ref of variable.references) {
      if (!ref.isWrite() || ref.init) continue;
      const assignment = ref.identifier.parent;
      o = worst(o, assignment.type === 'AssignmentExpression' ? origin(assignment, ref.from, seen) : 'unknown');
    }
    return o;
  }

  /** A reduce's accumulator is its initial value; a default value counts too; anything else is the caller's. */
  function parameterOrigin(def, scope, seen) {
    const fn = def.node;
    const param = fn.params.find((p) => p === def.name || (p.type === 'AssignmentPattern' && p.left === def.name));
    const fallback = param?.type === 'AssignmentPattern' ? origin(param.right, scope, seen) : 'unknown';
    const call = fn.parent;
    const isReduce =
      call?.type === 'CallExpression' &&
      call.arguments[0] === fn &&
      call.callee.type === 'MemberExpression' &&
      ['reduce', 'reduceRight'].includes(call.callee.property.name) &&
      fn.params[0] === param;
    return isReduce && call.arguments[1]
      ? worst(fallback === 'unknown' ? 'data' : fallback, origin(call.arguments[1], scope, seen))
      : worst(fallback, 'unknown');
  }

  function rootName(node) {
    let n = unwrap(node);
    while (n && n.type === 'MemberExpression') n = unwrap(n.object);
    return n?.type === 'Identifier' ? n.name : undefined;
  }

  function allowed(mapNode) {
    const name = rootName(mapNode);
    return allow.some((a) => (filename === a.file || filename.endsWith(`/${a.file}`)) && a.name === name);
  }

  function check(node, map, key, what) {
    const scope = sourceCode.getScope(node);
    if (constantKey(key, scope) || allowed(map)) return;
    if (origin(map, scope, new Set()) === 'plain') {
      context.report({ node, messageId: 'plainMap', data: { what, map: sourceCode.getText(map) } });
    }
  }

  return {
    MemberExpression(node) {
      if (!node.computed) return;
      const parent = node.parent;
      if (parent.type === 'UnaryExpression' && parent.operator === 'delete') return; // removes an own key, or nothing
      const write = (parent.type === 'AssignmentExpression' && parent.left === node) || parent.type === 'UpdateExpression';
      // A read from a SCREAMING_CASE table: the program's own lookup table, its keys typed (an `in`
      // test, where the key is not known to be one, is checked below).
      if (write || !CONSTANT_NAME.test(rootName(node.object) ?? '')) check(node, node.object, node.property, write ? 'written' : 'read');
      if (parent.type === 'AssignmentExpression' && parent.left === node && ['=', '??=', '||='].includes(parent.operator)) {
        const value = unwrap(parent.right);
        const scope = sourceCode.getScope(node);
        if (value.type === 'ObjectExpression' && value.properties.length === 0 && !constantKey(node.property, scope) && !allowed(node.object)) {
          context.report({ node: parent, messageId: 'emptyPlainMap' });
        }
      }
    },
    BinaryExpression(node) {
      if (node.operator === 'in' && node.left.type !== 'PrivateIdentifier') check(node, node.right, node.left, 'tested with `in`');
    },
  };
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'no plain object used as a map under keys that are not constants (prototype keys are legal data)' },
    schema: [
      {
        type: 'object',
        properties: {
          factories: { type: 'array', items: { type: 'string' } },
          allow: {
            type: 'array',
            items: {
              type: 'object',
              properties: { file: { type: 'string' }, name: { type: 'string' }, reason: { type: 'string', minLength: 10 } },
              required: ['file', 'name', 'reason'],
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
    ],
    messages: {
      plainMap:
        '`{{map}}` may be a plain object, {{what}} under a key that is not a constant: a key from outside can be `__proto__` or `constructor`. Use a Map, or dataObject() and ownValue() (api/data-object.ts)',
      emptyPlainMap: 'a plain `{}` stored under a key that is not a constant is a map to come: use dataObject() (api/data-object.ts) or a Map',
    },
  },
  create,
};
