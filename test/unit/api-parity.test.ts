// Parity, unit half: validateSpec and the generated CRD agree on generated near-valid URLs,
// durations and names. Here the CRD's leaf rules are evaluated in JavaScript (pattern, lengths, and
// the few CEL rule shapes the CRD uses on those fields; an unknown shape fails the test); the
// integration half (test/integration/api-crd.test.ts) sends the same generators to a real API server.
import fc from 'fast-check';
import { openAPIV3Schema, type JSONSchemaProps } from '../../api/crd';
import { goDurationNanos } from '../../api/duration';
import { validateSpec } from '../../api/validate';
import { NAME_FIELDS, nearValidDuration, nearValidName, nearValidURL, setPath } from '../fixtures/bad-specs';
import { assertProperty } from '../support/property';
import { validRawSpec } from './api-helpers';

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SPEC = openAPIV3Schema().properties!.spec!;

/** The CRD node of a spec path (list indexes step into `items`). */
function nodeAt(path: (string | number)[]): JSONSchemaProps {
  let node = SPEC;
  for (const key of path) node = (typeof key === 'number' ? node.items : node.properties?.[key])!;
  return node;
}

const durationNs = (text: string) => goDurationNanos(text);
/** A duration literal of a CEL rule, in Go nanoseconds. */
const literal = (text: string) => {
  const ns = goDurationNanos(text);
  if (ns === undefined) throw new Error(`bad literal ${text}`);
  return ns;
};

/** One CEL rule of a string field, evaluated; only the shapes the CRD uses on leaf fields. */
function evalRule(rule: string, v: string): boolean {
  let m: RegExpExecArray | null;
  if ((m = /^self == '' \|\| self\.matches\(r"(.*)"\)$/.exec(rule))) return v === '' || new RegExp(m[1]!).test(v);
  if ((m = /^self\.size\(\) <= (\d+)$/.exec(rule))) return [...v].length <= Number(m[1]);
  if (rule === "!self.contains('.')") return !v.includes('.');
  const ns = durationNs(v);
  if (rule === 'int(duration(self)) % 1000000 == 0') return ns !== undefined && ns % 1_000_000n === 0n;
  if ((m = /^duration\(self\) >= duration\('([^']+)'\) && duration\(self\) <= duration\('([^']+)'\)$/.exec(rule))) {
    return ns !== undefined && ns >= literal(m[1]!) && ns <= literal(m[2]!);
  }
  throw new Error(`no JavaScript evaluation for CEL rule ${rule}: teach api-parity.test.ts`);
}

/**
 * What the API server decides about a string at a leaf field: OpenAPI first; CEL rules only when
 * the OpenAPI checks pass (the API server skips them otherwise).
 */
function crdAccepts(node: JSONSchemaProps, v: string): boolean {
  const length = [...v].length; // the API server counts characters (runes), not UTF-16 units
  if (node.maxLength !== undefined && length > node.maxLength) return false;
  if (node.minLength !== undefined && length < node.minLength) return false;
  if (node.pattern !== undefined && !new RegExp(node.pattern).test(v)) return false;
  return (node['x-kubernetes-validations'] ?? []).every((r) => evalRule(r.rule, v));
}

function verdicts(path: (string | number)[], value: string, base: () => Raw = validRawSpec): [boolean, boolean] {
  const spec = base();
  setPath(spec, path, value);
  return [validateSpec(spec).success, crdAccepts(nodeAt(path), value)];
}

jest.setTimeout(60_000);

describe('validateSpec and the generated CRD agree', () => {
  it('on remoteWriteURLs', () => {
    let accepted = 0;
    assertProperty(
      fc.property(nearValidURL, (url) => {
        const [schema, crd] = verdicts(['zones', 2, 'remoteWriteURL'], url);
        expect({ url, schema }).toEqual({ url, schema: crd });
        if (schema) accepted++;
      }),
      { numRuns: 500 },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('on durations (pauseBetweenZones: no cross-field rule)', () => {
    let accepted = 0;
    assertProperty(
      fc.property(nearValidDuration, (d) => {
        const [schema, crd] = verdicts(['strategy', 'pauseBetweenZones'], d);
        expect({ d, schema }).toEqual({ d, schema: crd });
        if (schema) accepted++;
      }),
      { numRuns: 500, examples: [['100.5ms'], ['1m0.0000001s'], ['0.00002750000000h'], ['1.0000000001s']] },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('on names and their derived-name limits', () => {
    let accepted = 0;
    assertProperty(
      fc.property(fc.constantFrom(...NAME_FIELDS), nearValidName, (field, name) => {
        const [schema, crd] = verdicts(field, name);
        expect({ field, name, schema }).toEqual({ field, name, schema: crd });
        if (schema) accepted++;
      }),
      { numRuns: 500 },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('on the clusterVersion tag', () => {
    const tag = fc.stringMatching(/^[A-Za-z0-9_.\-:/ é]{0,130}$/);
    assertProperty(
      fc.property(tag, (v) => {
        const [schema, crd] = verdicts(['clusterVersion'], v);
        expect({ v, schema }).toEqual({ v, schema: crd });
      }),
      { numRuns: 300 },
    );
  });
});
