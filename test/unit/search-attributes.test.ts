// The start-up check of the namespace's search attributes (process/search-attributes.ts): what is
// missing or of the wrong type, the refusal's text, and what a frontend's answer (or refusal to
// answer) makes of it. The processes' refusal against a real dev server:
// test/integration/search-attributes.test.ts.
import type { Connection } from '@temporalio/client';
import { defineSearchAttributeKey } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_KEYS } from '../../api/rollout-contract';
import { checkSearchAttributes, searchAttributeProblems, searchAttributesMessage } from '../../process/search-attributes';

const at = { address: 'temporal:7233', namespace: 'rollouts' };
const all = new Map(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, k.type]));

test('nothing is missing when every attribute is registered with its type, whatever else is', () => {
  expect(searchAttributeProblems(SEARCH_ATTRIBUTE_KEYS, new Map([...all, ['Other', 'TEXT']]))).toEqual([]);
});

test('an unregistered attribute and one of another type are both problems, in the contract order', () => {
  const registered = new Map(all);
  registered.delete('VmdcName');
  registered.set('VmdcGeneration', 'KEYWORD');
  expect(searchAttributeProblems(SEARCH_ATTRIBUTE_KEYS, registered)).toEqual([
    { name: 'VmdcName', type: 'KEYWORD' },
    { name: 'VmdcGeneration', type: 'INT', found: 'KEYWORD' },
  ]);
});

test('names are compared exactly (search attribute names are case-sensitive)', () => {
  const registered = new Map([...all].map(([n, t]) => [n.toLowerCase(), t]));
  expect(searchAttributeProblems(SEARCH_ATTRIBUTE_KEYS, registered).map((p) => p.name)).toEqual(SEARCH_ATTRIBUTE_KEYS.map((k) => k.name));
});

test('an empty namespace: the message names all four, one create command with a --type for each --name, and the chart hook', () => {
  const message = searchAttributesMessage(searchAttributeProblems(SEARCH_ATTRIBUTE_KEYS, new Map()), at);
  expect(message.split('\n')).toEqual([
    'Temporal namespace "rollouts" at temporal:7233 lacks search attributes that vmrollout sets on every rollout:',
    '  - VmdcNamespace (Keyword): not registered',
    '  - VmdcName (Keyword): not registered',
    '  - VmdcGeneration (Int): not registered',
    '  - VmdcClusterVersion (Keyword): not registered',
    'Create them (once per namespace), then start again:',
    '  temporal operator search-attribute create --address temporal:7233 --namespace rollouts --name VmdcNamespace --type Keyword --name VmdcName --type Keyword --name VmdcGeneration --type Int --name VmdcClusterVersion --type Keyword',
    'With the Helm chart, set temporalSetup.enabled=true: its hook Job registers them before the worker and the trigger start.',
    'On Temporal Cloud the operator commands are not allowed: add them in the Cloud UI or with `tcld namespace search-attributes add`.',
  ]);
});

test('a wrong type: the message says what it is and removes it before creating it again', () => {
  const message = searchAttributesMessage(
    searchAttributeProblems([defineSearchAttributeKey('VmdcGeneration', 'INT')], new Map([['VmdcGeneration', 'KEYWORD_LIST']])),
    at,
  );
  expect(message).toContain('  - VmdcGeneration (Int): registered as KeywordList');
  expect(message).toContain('  temporal operator search-attribute remove --address temporal:7233 --namespace rollouts --name VmdcGeneration\n');
  expect(message).toContain('  temporal operator search-attribute create --address temporal:7233 --namespace rollouts --name VmdcGeneration --type Int\n');
  expect(message.indexOf('remove')).toBeLessThan(message.indexOf('create'));
});

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** A connection whose ListSearchAttributes answers `answer` (or rejects with it). */
const frontend = (answer: () => Promise<Partial<temporal.api.operatorservice.v1.IListSearchAttributesResponse>>) =>
  ({ operatorService: { listSearchAttributes: answer } }) as unknown as Connection;
/** An error as the SDK's gRPC client raises it. */
const grpcError = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });

test("the frontend's answer (proto enum types) is read into the SDK's types", async () => {
  const customAttributes = {
    VmdcNamespace: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    VmdcName: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    VmdcGeneration: IndexedValueType.INDEXED_VALUE_TYPE_INT,
    VmdcClusterVersion: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  };
  expect(
    await checkSearchAttributes(
      frontend(async () => ({ customAttributes })),
      at,
    ),
  ).toEqual({ ok: true });
  const wrong = { ...customAttributes, VmdcGeneration: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST };
  const check = await checkSearchAttributes(
    frontend(async () => ({ customAttributes: wrong })),
    at,
  );
  expect(check).toEqual({ ok: false, message: expect.stringContaining('  - VmdcGeneration (Int): registered as KeywordList\n') });
});

test('a frontend that will not list them (permission denied, unimplemented): unchecked, naming what must exist', async () => {
  for (const code of [7, 12]) {
    const check = await checkSearchAttributes(
      frontend(() => Promise.reject(grpcError(code, 'Request unauthorized.'))),
      at,
    );
    expect(check).toEqual({
      ok: 'unchecked',
      reason:
        'could not list the search attributes of namespace "rollouts" (Request unauthorized.); make sure it has VmdcNamespace (Keyword), VmdcName (Keyword), VmdcGeneration (Int), VmdcClusterVersion (Keyword)',
    });
  }
});

test('any other error (unreachable, unauthenticated) fails the start as before', async () => {
  for (const code of [14, 16]) {
    await expect(
      checkSearchAttributes(
        frontend(() => Promise.reject(grpcError(code, 'no'))),
        at,
      ),
    ).rejects.toThrow(`${code} no`);
  }
});
