// The table of issue 29's hostile inputs (test/fixtures/hostile/index.ts): one list of every case,
// each run by its table's driver in `make test`. A defect of the issue left without a case, a case
// id used twice, or a table no driver runs fails here.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CODEC_BATCH, GZIP_BOMB, METRIC_VALUES, YAML_ALIASES } from '../fixtures/hostile/caps';
import { ADDRESS, FORGED_OWNER, FOREIGN_SLICE, FQDN, POD_IDENTITY } from '../fixtures/hostile/endpoint-slices';
import { HOSTILE_CASES, HOSTILE_TABLES } from '../fixtures/hostile';
import { CLI_ARGS, PARSE_ERROR, TERMINAL, URL_LABEL } from '../fixtures/hostile/output';
import { FORGED_RECORD } from '../fixtures/hostile/route-records';
import { OTHER_DESTINATIONS, POD_FIELDS, REMOTE_WRITE, SELECTION, STATIC_URLS, VMAUTH_URLS } from '../fixtures/hostile/trust-policy';

/** Every defect issue 29 names, in its order. */
const ISSUE_29_DEFECTS = [
  FORGED_RECORD,
  'Prototype pollution across the worker',
  FOREIGN_SLICE,
  FQDN,
  ADDRESS,
  FORGED_OWNER,
  POD_IDENTITY,
  GZIP_BOMB,
  YAML_ALIASES,
  STATIC_URLS,
  VMAUTH_URLS,
  SELECTION,
  REMOTE_WRITE,
  POD_FIELDS,
  OTHER_DESTINATIONS, // found while covering "every way an object can route": extraArgs flags, vmBackup, hand-written scrape configs
  TERMINAL,
  PARSE_ERROR,
  URL_LABEL,
  METRIC_VALUES,
  CODEC_BATCH,
  CLI_ARGS,
];

describe('the hostile table', () => {
  it('every defect of issue 29 has a case, and every case names one of them', () => {
    const exercised = new Set(HOSTILE_CASES.map((c) => c.defect));
    expect(ISSUE_29_DEFECTS.filter((d) => !exercised.has(d))).toEqual([]);
    expect([...exercised].filter((d) => !ISSUE_29_DEFECTS.includes(d))).toEqual([]);
  });

  it('case ids are unique within each table, and each case says what it is and what must happen', () => {
    const ids = HOSTILE_CASES.map((c) => `${c.table}/${c.id}`);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    for (const c of HOSTILE_CASES) expect([c.id, c.input.length > 0, c.expect.length > 0]).toEqual([c.id, true, true]);
  });

  it.each(HOSTILE_TABLES.map((t) => [t.table, t.driver] as const))('table %s is run by test/unit/%s', (table, driver) => {
    const text = readFileSync(path.join(__dirname, driver), 'utf8');
    expect(text).toContain(`'../fixtures/hostile/${table}'`);
  });
});
