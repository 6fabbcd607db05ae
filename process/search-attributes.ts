// The search attributes every rollout carries (api/rollout-contract.ts) must be registered in the
// Temporal namespace: the server refuses to start a workflow that sets an unknown one, so without
// them the trigger's first start would fail, and every rollout after it. Both processes look before
// they start and refuse to run, naming what is missing and how to create it.
import { isGrpcServiceError, type Connection } from '@temporalio/client';
import { TypedSearchAttributes, type SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_KEYS } from '../api/rollout-contract';

/** A required attribute that is not registered (`found` undefined) or registered with another type. */
export interface SearchAttributeProblem {
  name: string;
  type: SearchAttributeType;
  found?: SearchAttributeType;
}

/** What the namespace lacks of `required`, given what it has registered (name → type). */
export function searchAttributeProblems(
  required: readonly SearchAttributeKey<SearchAttributeType>[],
  registered: ReadonlyMap<string, SearchAttributeType>,
): SearchAttributeProblem[] {
  return required.flatMap((k) => {
    const found = registered.get(k.name);
    if (found === k.type) return [];
    return [found === undefined ? { name: k.name, type: k.type } : { name: k.name, type: k.type, found }];
  });
}

/** The CLI's (and the Web UI's) name of a type: `Keyword`, `Int`, `KeywordList`, … */
const cliType = (t: SearchAttributeType): string => TypedSearchAttributes.toMetadataType(t);

/**
 * The refusal: each problem on a line, what to do about a wrong type, the command that creates what
 * is missing, and the chart's hook. The CLI pairs the i-th --name with the i-th --type and ignores a
 * --name without its --type, so every name has its own.
 */
export function searchAttributesMessage(problems: readonly SearchAttributeProblem[], at: { address: string; namespace: string }): string {
  const lines = [
    `Temporal namespace ${JSON.stringify(at.namespace)} at ${at.address} lacks search attributes that vmrollout sets on every rollout:`,
    ...problems.map((p) => `  - ${p.name} (${cliType(p.type)}): ${p.found === undefined ? 'not registered' : `registered as ${cliType(p.found)}`}`),
  ];
  const connection = `--address ${at.address} --namespace ${at.namespace}`;
  const wrongType = problems.filter((p) => p.found !== undefined);
  if (wrongType.length) {
    lines.push(
      'An attribute of the wrong type must be removed first (on a self-hosted server; on Temporal Cloud, in its UI or with tcld):',
      `  temporal operator search-attribute remove ${connection} ${wrongType.map((p) => `--name ${p.name}`).join(' ')}`,
    );
  }
  lines.push(
    'Create them (once per namespace), then start again:',
    `  temporal operator search-attribute create ${connection} ${problems.map((p) => `--name ${p.name} --type ${cliType(p.type)}`).join(' ')}`,
    'With the Helm chart, set temporalSetup.enabled=true: its hook Job registers them before the worker and the trigger start.',
    'On Temporal Cloud the operator commands are not allowed: add them in the Cloud UI or with `tcld namespace search-attributes add`.',
  );
  return lines.join('\n');
}

/** The custom search attributes registered in `namespace`, by name. */
export async function registeredSearchAttributes(connection: Connection, namespace: string): Promise<Map<string, SearchAttributeType>> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const types = new Map<string, SearchAttributeType>();
  for (const [name, indexed] of Object.entries(customAttributes ?? {})) {
    // INDEXED_VALUE_TYPE_KEYWORD_LIST → KEYWORD_LIST, the SDK's SearchAttributeType
    const type = temporal.api.enums.v1.IndexedValueType[indexed]?.replace(/^INDEXED_VALUE_TYPE_/, '');
    if (type) types.set(name, type as SearchAttributeType);
  }
  return types;
}

// gRPC status codes: a frontend that does not let this identity list search attributes (an API key
// without the operator role, a proxy that only passes the workflow service).
const PERMISSION_DENIED = 7;
const UNIMPLEMENTED = 12;

export type SearchAttributeCheck = { ok: true } | { ok: false; message: string } | { ok: 'unchecked'; reason: string };

/**
 * Lists the namespace's search attributes and compares them with the required ones. When the
 * frontend will not list them, the check is skipped (`unchecked`), not failed: a namespace set up
 * right must not be refused for a permission the processes need for nothing else.
 */
export async function checkSearchAttributes(connection: Connection, at: { address: string; namespace: string }): Promise<SearchAttributeCheck> {
  let registered: Map<string, SearchAttributeType>;
  try {
    registered = await registeredSearchAttributes(connection, at.namespace);
  } catch (err) {
    if (isGrpcServiceError(err) && (err.code === PERMISSION_DENIED || err.code === UNIMPLEMENTED)) {
      const names = SEARCH_ATTRIBUTE_KEYS.map((k) => `${k.name} (${cliType(k.type)})`).join(', ');
      return {
        ok: 'unchecked',
        reason: `could not list the search attributes of namespace ${JSON.stringify(at.namespace)} (${err.details || err.message}); make sure it has ${names}`,
      };
    }
    throw err;
  }
  const problems = searchAttributeProblems(SEARCH_ATTRIBUTE_KEYS, registered);
  return problems.length ? { ok: false, message: searchAttributesMessage(problems, at) } : { ok: true };
}
