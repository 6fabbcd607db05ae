// Validation of a VMDistributedCluster spec: the schema's shapes (api/spec-schema.ts), then the
// rules that need parsing or span fields (durations, uniqueness, exactly-one-of, nesting depth),
// every problem reported at once with its path; a valid spec comes back normalized.
import type { z } from 'zod';
import { parseDuration, type DurationParseResult } from './duration';
import { childrenOf, describe, isContainer, isPlainObject, jsonDepth } from './json-value';
import { ADOPT_MESSAGE, BOTH_FORMS_MESSAGE, DURATION_RULES, DURATION_RULES_MS, durationPath, LIMITS, rangeMessage, type StrategyDurationField } from './limits';
import { normalize, pruneNulls } from './normalize';
import {
  CANARY_ZONE_MESSAGE,
  ONE_STORAGE_MESSAGE,
  SINGLE_PARITY_MESSAGE,
  SINGLE_VERSION_MESSAGE,
  vmDistributedClusterSpecSchema,
  ZONE_VMAGENT_MESSAGE,
} from './spec-schema';
import { CANARY_HELD_MESSAGE, SERVING_ZONE_MESSAGE } from './traffic-mode';
import type { NormalizedSpec } from './types';
import { normalizeURL, redactURL, redactURLsIn } from './url';

/** `spec`'s own level in the object (the object's root is level 1). */
const SPEC_LEVEL = 2;

export interface ValidationIssue {
  /** e.g. `spec.zones[1].vmcluster.name` */
  path: string;
  message: string;
}

export type ValidationResult = { success: true; spec: NormalizedSpec } | { success: false; issues: ValidationIssue[] };

const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `['zones', 1, 'vmcluster', 'name']` → `spec.zones[1].vmcluster.name` */
export function formatPath(path: readonly PropertyKey[], root = 'spec'): string {
  let out = root;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && IDENT_RE.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

/** Messages for issues whose schema has no message of its own. */
function genericMessage(iss: {
  code?: string;
  input?: unknown;
  expected?: string;
  values?: readonly unknown[];
  minimum?: unknown;
  maximum?: unknown;
  origin?: string;
}): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'is required';
      return `must be ${article(iss.expected ?? 'value')} (got ${describe(iss.input)})`;
    case 'invalid_value':
      return `must be one of ${(iss.values ?? []).map((v) => JSON.stringify(v)).join(', ')} (got ${describe(iss.input)})`;
    case 'too_small':
      return `must be at least ${String(iss.minimum)}${iss.origin === 'string' ? ' characters' : ''}`;
    case 'too_big':
      return `must be at most ${String(iss.maximum)}${iss.origin === 'string' ? ' characters' : ''}`;
    default:
      return undefined;
  }
}

function article(expected: string): string {
  if (expected === 'object' || expected === 'array' || expected === 'integer') return `an ${expected}`;
  if (expected === 'record') return 'an object';
  if (expected === 'nonoptional') return 'set';
  return `a ${expected}`;
}

function get(v: unknown, key: string): unknown {
  return isPlainObject(v) && Object.prototype.hasOwnProperty.call(v, key) ? v[key] : undefined;
}

/** The strategy's durations that are written as strings, each parsed once per validation. */
type StrategyDurations = ReadonlyMap<StrategyDurationField, { text: string; parsed: DurationParseResult }>;

function strategyDurations(spec: unknown): StrategyDurations {
  const out = new Map<StrategyDurationField, { text: string; parsed: DurationParseResult }>();
  const strategy = get(spec, 'strategy');
  for (const field of Object.keys(DURATION_RULES) as StrategyDurationField[]) {
    const text = durationPath(field).reduce<unknown>(get, strategy);
    if (typeof text === 'string') out.set(field, { text, parsed: parseDuration(text) });
  }
  return out;
}

/** A duration's grammar, whole milliseconds and range (its type is the schema's). */
function durationIssues(durations: StrategyDurations): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const [field, { text, parsed }] of durations) {
    const path = formatPath(['strategy', ...durationPath(field)]);
    const { min, max } = DURATION_RULES_MS[field];
    if (!parsed.ok) issues.push({ path, message: `${parsed.message} (got ${JSON.stringify(text.slice(0, 40))})` });
    else if (parsed.ms < min || parsed.ms > max) issues.push({ path, message: `${rangeMessage(DURATION_RULES[field])} (got ${text})` });
  }
  return issues;
}

/** The strategy durations in ms of a valid spec: as written, or the defaults. */
function durationsMs(durations: StrategyDurations): Record<StrategyDurationField, number> {
  const out = {} as Record<StrategyDurationField, number>;
  for (const field of Object.keys(DURATION_RULES) as StrategyDurationField[]) {
    const parsed = durations.get(field)?.parsed;
    out[field] = parsed?.ok ? parsed.ms : DURATION_RULES_MS[field].default;
  }
  return out;
}

/** Rules across fields, checked on the raw input (whatever its shape), so all problems are reported at once. */
function crossFieldIssues(raw: unknown, durations: StrategyDurations): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isPlainObject(raw)) return issues;

  const bothForms = (obj: unknown, path: (string | number)[]) => {
    if (get(obj, 'overrideSpec') !== undefined && get(obj, 'spec') !== undefined) {
      issues.push({ path: formatPath(path), message: BOTH_FORMS_MESSAGE });
    }
    if (get(obj, 'adopt') === true && get(obj, 'spec') === undefined) issues.push({ path: formatPath(path), message: ADOPT_MESSAGE });
  };

  const zones = raw.zones;
  if (Array.isArray(zones)) {
    const seen = {
      name: new Map<string, string>(),
      vmcluster: new Map<string, string>(),
      vmsingle: new Map<string, string>(),
      vmuser: new Map<string, string>(),
      vmagent: new Map<string, string>(),
      url: new Map<string, string>(),
    };
    const globalAgent = get(raw.vmagent, 'name');
    const unique = (
      map: Map<string, string>,
      value: unknown,
      path: (string | number)[],
      what: (v: string) => string,
      key: (v: string) => string | undefined = (v) => v,
    ) => {
      if (typeof value !== 'string' || value === '') return;
      const k = key(value);
      if (k === undefined) return;
      const p = formatPath(path);
      const first = map.get(k);
      if (first !== undefined) issues.push({ path: p, message: `${what(value)} is used twice (also ${first})` });
      else map.set(k, p);
    };
    // As the CRD's rule: URLs that start like one, compared normalized; displayed redacted.
    const urlKey = (v: string) => (v.startsWith('http://') || v.startsWith('https://') ? normalizeURL(v) : undefined);
    const urlWhat = (v: string) =>
      `remoteWriteURL ${JSON.stringify(redactURL(v))}${normalizeURL(v) === v ? '' : ` (normalized ${JSON.stringify(redactURL(normalizeURL(v)))})`}`;
    zones.forEach((zone: unknown, i) => {
      unique(seen.name, get(zone, 'name'), ['zones', i, 'name'], (v) => `zone name ${JSON.stringify(v)}`);
      const vmcluster = get(zone, 'vmcluster');
      unique(seen.vmcluster, get(vmcluster, 'name'), ['zones', i, 'vmcluster', 'name'], (v) => `VMCluster name ${JSON.stringify(v)}`);
      bothForms(vmcluster, ['zones', i, 'vmcluster']);
      const vmsingle = get(zone, 'vmsingle');
      unique(seen.vmsingle, get(vmsingle, 'name'), ['zones', i, 'vmsingle', 'name'], (v) => `VMSingle name ${JSON.stringify(v)}`);
      bothForms(vmsingle, ['zones', i, 'vmsingle']);
      if (isPlainObject(zone) && (vmcluster === undefined) === (vmsingle === undefined))
        issues.push({ path: formatPath(['zones', i]), message: ONE_STORAGE_MESSAGE });
      const vmuser = get(zone, 'vmuser');
      unique(seen.vmuser, get(vmuser, 'name'), ['zones', i, 'vmuser', 'name'], (v) => `VMUser name ${JSON.stringify(v)}`);
      bothForms(vmuser, ['zones', i, 'vmuser']);
      const vmagent = get(zone, 'vmagent');
      const agentName = get(vmagent, 'name');
      if (typeof agentName === 'string' && agentName === globalAgent) {
        issues.push({ path: formatPath(['zones', i, 'vmagent', 'name']), message: ZONE_VMAGENT_MESSAGE });
      } else unique(seen.vmagent, agentName, ['zones', i, 'vmagent', 'name'], (v) => `VMAgent name ${JSON.stringify(v)}`);
      bothForms(vmagent, ['zones', i, 'vmagent']);
      unique(seen.url, get(zone, 'remoteWriteURL'), ['zones', i, 'remoteWriteURL'], urlWhat, urlKey);
    });
  }
  // As the CRD's rules: a zone serves reads unless its mode says it does not (a bad mode is its own issue).
  const servesReads = (z: unknown) => {
    const m = get(z, 'trafficMode');
    return m === undefined || m === 'read-write';
  };
  if (Array.isArray(zones) && zones.length > 0 && !zones.some(servesReads)) issues.push({ path: 'spec.zones', message: SERVING_ZONE_MESSAGE });
  const canaryZone = get(get(raw.strategy, 'canary'), 'zone');
  if (typeof canaryZone === 'string' && Array.isArray(zones)) {
    const named = zones.filter((z: unknown) => get(z, 'name') === canaryZone);
    if (named.length === 0) {
      issues.push({ path: 'spec.strategy.canary.zone', message: `${CANARY_ZONE_MESSAGE} (got ${JSON.stringify(canaryZone.slice(0, 63))})` });
    } else if (!named.every(servesReads)) issues.push({ path: 'spec.strategy.canary.zone', message: CANARY_HELD_MESSAGE });
  }
  if (Array.isArray(zones) && zones.some((z: unknown) => get(z, 'vmsingle') !== undefined)) {
    if (raw.singleVersion === undefined) issues.push({ path: 'spec.singleVersion', message: SINGLE_VERSION_MESSAGE });
    if (get(raw.strategy, 'sampleParity') !== undefined) issues.push({ path: 'spec.strategy.sampleParity', message: SINGLE_PARITY_MESSAGE });
  }
  bothForms(raw.vmagent, ['vmagent']);
  bothForms(raw.vmauth, ['vmauth']);

  const deep = depthIssue(raw);
  if (deep) issues.push(deep);

  // Strategy: only when the involved durations are individually valid (else they already have an issue).
  if (isPlainObject(raw.strategy === undefined ? {} : raw.strategy)) {
    const d = (field: StrategyDurationField): { ms: number; text: string } | undefined => {
      const rule = DURATION_RULES[field];
      const limits = DURATION_RULES_MS[field];
      const value = durations.get(field);
      if (value === undefined) return { ms: limits.default, text: `${rule.default} (default)` };
      const r = value.parsed;
      if (!r.ok || r.ms < limits.min || r.ms > limits.max) return undefined;
      return { ms: r.ms, text: value.text };
    };
    const poll = d('pollInterval');
    const drained = d('queueDrainedFor');
    const drain = d('readDrainDelay');
    const timeout = d('zoneTimeout');
    if (poll && drained && poll.ms > drained.ms) {
      issues.push({
        path: 'spec.strategy.pollInterval',
        message: `must not be longer than strategy.queueDrainedFor (${poll.text} > ${drained.text}), or the queues are never sampled twice`,
      });
    }
    if (timeout && drained && timeout.ms <= drained.ms) {
      issues.push({
        path: 'spec.strategy.zoneTimeout',
        message: `must be longer than strategy.queueDrainedFor (${timeout.text} <= ${drained.text}), or no zone can ever finish`,
      });
    }
    if (timeout && drain && timeout.ms <= drain.ms) {
      issues.push({
        path: 'spec.strategy.zoneTimeout',
        message: `must be longer than strategy.readDrainDelay (${timeout.text} <= ${drain.text}), or no zone can ever finish`,
      });
    }
  }
  return issues;
}

/**
 * The problem with a spec nested deeper than vmrollout accepts (LIMITS.jsonMaxDepth), reported at the top of the
 * deepest branch (e.g. `spec.overrideSpec` or `spec.zones[1].vmcluster.spec`), or undefined.
 */
function depthIssue(spec: unknown): ValidationIssue | undefined {
  const max = LIMITS.jsonMaxDepth - SPEC_LEVEL + 1;
  const depth = jsonDepth(spec);
  if (depth <= max) return undefined;
  // Follow the deepest branch down to the free-form field it is in (at most 4 keys below spec).
  const path: (string | number)[] = [];
  let node: unknown = spec;
  while (path.length < 4 && isContainer(node)) {
    let best: [string | number, unknown] | undefined;
    let bestDepth = -1;
    for (const [key, child] of childrenOf(node)) {
      const d = jsonDepth(child);
      if (d > bestDepth) [best, bestDepth] = [[key, child], d];
    }
    if (!best || bestDepth === 0) break;
    path.push(best[0]);
    node = best[1];
    if (typeof best[0] === 'string' && (best[0] === 'overrideSpec' || best[0] === 'spec')) break;
  }
  const levels = depth === Infinity ? 'without end (a cycle)' : `${depth + SPEC_LEVEL - 1} levels deep`;
  return {
    path: formatPath(path),
    message: `is nested too deep: vmrollout refuses JSON objects and arrays nested more than ${LIMITS.jsonMaxDepth} levels deep, counted from the object's root (this value reaches ${levels}; the API server's own limit is ${LIMITS.serverJsonMaxDepth})`,
  };
}

function toIssues(error: z.ZodError): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const iss of error.issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) out.push({ path: formatPath([...iss.path, key]), message: `unknown field ${JSON.stringify(key)}` });
    } else if (iss.code === 'invalid_union') {
      out.push({ path: formatPath(iss.path), message: 'must be a JSON value' });
    } else {
      out.push({ path: formatPath(iss.path), message: iss.message });
    }
  }
  return out;
}

/**
 * Validates the `spec` of a VMDistributedCluster (as read from the API server or a YAML file) and
 * returns it normalized (defaults applied, durations in ms), or every problem found with its path.
 * Accepts exactly what the API server accepts with the generated CRD (nulls in declared fields are
 * dropped first, as the API server does). Never throws.
 */
export function validateSpec(input: unknown): ValidationResult {
  try {
    const spec = pruneNulls(input);
    const durations = strategyDurations(spec);
    const parsed = vmDistributedClusterSpecSchema.safeParse(spec, {
      error: (iss) => genericMessage(iss as Parameters<typeof genericMessage>[0]),
    });
    const issues: ValidationIssue[] = parsed.success ? [] : toIssues(parsed.error);
    const seen = new Set(issues.map((i) => `${i.path}\u0000${i.message}`));
    for (const i of [...durationIssues(durations), ...crossFieldIssues(spec, durations)]) {
      const key = `${i.path}\u0000${i.message}`;
      if (!seen.has(key)) {
        seen.add(key);
        issues.push(i);
      }
    }
    // No message or path ever shows credentials, whatever field a URL with user:password@ was put in.
    if (!parsed.success || issues.length > 0)
      return { success: false, issues: issues.map((i) => ({ path: redactURLsIn(i.path), message: redactURLsIn(i.message) })) };
    return { success: true, spec: normalize(parsed.data, durationsMs(durations)) };
  } catch (err) {
    return {
      success: false,
      issues: [{ path: 'spec', message: `could not be validated: ${err instanceof Error ? err.message : String(err)}` }],
    };
  }
}

const MAX_LISTED = 10;
const MAX_LINE = 1000;

/** One human-readable line for status.message, conditions and Kubernetes Events. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  if (issues.length === 0) return 'spec is valid';
  const parts = issues.slice(0, MAX_LISTED).map((i) => `${i.path}: ${i.message}`.replace(/\s+/g, ' '));
  let line = issues.length === 1 ? `invalid spec: ${parts[0]}` : `invalid spec (${issues.length} problems): ${parts.join('; ')}`;
  if (issues.length > MAX_LISTED) line += `; and ${issues.length - MAX_LISTED} more`;
  if (line.length > MAX_LINE) line = `${line.slice(0, MAX_LINE - 1)}…`;
  return line;
}
