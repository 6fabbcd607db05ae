// Every bad spec of test/fixtures/bad-specs.ts through validateSpec: rejected, at its path, with its
// message, never showing a secret. The same table runs through a real kube-apiserver with the CRD in
// test/integration/api-crd.test.ts.
import { formatIssues, validateSpec } from '../../api/validate';
import { BAD_SPECS, nestedLists, nestedObjects, toJsonText } from '../fixtures/bad-specs';
import { validRawSpec } from './api-helpers';

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('the bad-spec table', () => {
  it('has at least 100 distinct cases', () => {
    expect(new Set(BAD_SPECS.map((c) => c.name)).size).toBe(BAD_SPECS.length);
    expect(BAD_SPECS.length).toBeGreaterThanOrEqual(100);
  });

  it('every case changes the valid spec', () => {
    for (const c of BAD_SPECS) {
      const spec = validRawSpec();
      c.mutate(spec);
      expect([c.name, toJsonText(spec) === toJsonText(validRawSpec())]).toEqual([c.name, false]);
    }
  });

  it('names a server path for every case but the two the API server refuses before reading any field', () => {
    const pathless = BAD_SPECS.filter((c) => c.server.path === undefined).map((c) => c.name);
    expect(pathless).toEqual(['global overrideSpec one level deeper than the API server allows', 'zone full spec one level deeper than the API server allows']);
  });
});

describe('validateSpec rejects every bad spec', () => {
  it.each(BAD_SPECS.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const spec = validRawSpec() as Raw;
    c.mutate(spec);
    const r = validateSpec(spec);
    if (r.success) throw new Error('accepted');
    if (!r.issues.some((i) => i.path === c.path && i.message.includes(c.message))) {
      throw new Error(`expected an issue at ${c.path} containing ${JSON.stringify(c.message)}, got:\n${JSON.stringify(r.issues, null, 2).slice(0, 3000)}`);
    }
    // One thing is broken: every issue is in the same part of the spec.
    const area = (p: string) => p.split(/[.[]/).slice(0, 2).join('.');
    for (const i of r.issues) expect([i.path, area(i.path)]).toEqual([i.path, area(c.path)]);
    const line = formatIssues(r.issues);
    expect(line).toContain(c.path);
    if (c.secret !== undefined) {
      expect(line).not.toContain(c.secret);
      for (const i of r.issues) expect(i.message).not.toContain(c.secret);
    }
  });
});

test('no issue path or message shows credentials, whatever field holds them', () => {
  const spec = validRawSpec() as Raw;
  spec['https://admin:hunter2@lb/x'] = 1;
  spec.clusterVersion = 'http://admin:hunter2@registry/v1';
  spec.strategy.order = 'http://admin:hunter2@x';
  spec.zones[1].name = spec.zones[0].name = 'http://admin:hunter2@zone';
  const r = validateSpec(spec);
  expect(r.success).toBe(false);
  if (r.success) return;
  expect(r.issues.length).toBeGreaterThanOrEqual(4);
  expect(JSON.stringify(r.issues)).not.toContain('hunter2');
  expect(formatIssues(r.issues)).toContain('***@');
});

describe("JSON nesting: at most 1000 levels from the object root (vmrollout's limit; the API server's is 10000)", () => {
  const withOverlay = (overrideSpec: unknown) => ({ ...validRawSpec(), overrideSpec });

  it('accepts the deepest overlay vmrollout accepts, and normalizes it', () => {
    // spec.overrideSpec is level 3: 998 levels of objects from there end at level 1000.
    const r = validateSpec(withOverlay(nestedObjects(998)));
    if (!r.success) throw new Error(formatIssues(r.issues));
    let depth = 0;
    for (let v: unknown = r.spec.overrideSpec; v && typeof v === 'object'; v = (v as Raw).a) depth++;
    expect(depth).toBe(998);
  });

  it('refuses one level more, at the overlay, with the level it reaches', () => {
    const r = validateSpec(withOverlay(nestedObjects(999)));
    expect(r.success).toBe(false);
    if (r.success) return;
    expect(r.issues).toEqual([
      {
        path: 'spec.overrideSpec',
        message: expect.stringContaining(
          "nested more than 1000 levels deep, counted from the object's root (this value reaches 1001 levels deep; the API server's own limit is 10000)",
        ),
      },
    ]);
  });

  it('counts lists like objects, wherever they are', () => {
    const at = (depth: number) => {
      const spec = validRawSpec() as Raw;
      spec.zones[2].vmcluster.spec = { list: nestedLists(depth) };
      return validateSpec(spec).success;
    };
    // zones[2].vmcluster.spec is level 6, its list 7.
    expect(at(994)).toBe(true);
    expect(at(995)).toBe(false);
  });

  it('rejects a cycle instead of looping', () => {
    const a: Raw = { x: 1 };
    a.self = a;
    const r = validateSpec(withOverlay(a));
    expect(r.success).toBe(false);
    if (!r.success)
      expect(formatIssues(r.issues)).toMatch(/spec\.overrideSpec\.self: must be a JSON value \(got a reference to an enclosing object: a cycle\)/);
  });

  it('checks a shared (not cyclic) value once: a 2^40-path DAG is quick', () => {
    let v: Raw = { leaf: true };
    for (let i = 0; i < 40; i++) v = { l: v, r: v };
    const started = Date.now();
    const r = validateSpec(withOverlay(v));
    expect(r.success).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('nulls in declared fields count as absent, as the API server prunes them', () => {
  it.each([
    ['paused', (s: Raw) => (s.paused = null)],
    ['overrideSpec', (s: Raw) => (s.overrideSpec = null)],
    ['strategy', (s: Raw) => (s.strategy = null)],
    ['a strategy duration', (s: Raw) => (s.strategy.readDrainDelay = null)],
    ['queueEmptyBytes', (s: Raw) => (s.strategy = { queueEmptyBytes: null })],
    ['a zone VMUser', (s: Raw) => (s.zones[0].vmuser = null)],
    ['a remoteWriteURL', (s: Raw) => (s.zones[2].remoteWriteURL = null)],
    ['an overlay of a managed object', (s: Raw) => (s.zones[0].vmcluster.overrideSpec = null)],
  ])('%s: null is accepted, as if absent', (_what, mutate) => {
    const spec = validRawSpec() as Raw;
    mutate(spec);
    const before = JSON.stringify(spec);
    const r = validateSpec(spec);
    if (!r.success) throw new Error(formatIssues(r.issues));
    expect(JSON.stringify(spec)).toBe(before); // the input is not modified
  });

  it('a null required field is "required"; nulls inside overlays stay (they delete in a merge patch)', () => {
    const spec = validRawSpec() as Raw;
    spec.clusterVersion = null;
    spec.zones[1].vmcluster = { name: null };
    const r = validateSpec(spec);
    expect(r.success).toBe(false);
    if (!r.success) {
      expect(r.issues.map((i) => i.path).sort()).toEqual(['spec.clusterVersion', 'spec.zones[1].vmcluster.name']);
      expect(r.issues.every((i) => i.message.startsWith('is required'))).toBe(true);
    }
    const overlay = validateSpec({ ...validRawSpec(), overrideSpec: { vmselect: { extraArgs: null } } });
    expect(overlay.success && overlay.spec.overrideSpec).toEqual({ vmselect: { extraArgs: null } });
  });
});
