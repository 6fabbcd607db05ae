// The trust policy: what a VMDistributedCluster may make vmrollout do in its namespace.
import { STRICT_TRUST_POLICY, trustIssues, validateUnderPolicy, type TrustPolicy } from '../../api/trust-policy';
import { isNamespaceService, inAllowList, urlHost, urlHostProblem } from '../../api/trust/hosts';
import { isDestinationFlag } from '../../api/trust/other-destinations';
import { referenceRepository, repositoryAllowed } from '../../api/trust/pod-fields';
import { pinsNamespace } from '../../api/trust/selectors';
import { exampleObjects, normalizedSpec, validRawSpec } from './api-helpers';

const NS = 'monitoring';
const CREATE: TrustPolicy = { ...STRICT_TRUST_POLICY, createNamespaces: [NS] };

/** validRawSpec (zone az-c's VMCluster is a full spec) with a VMUser whose targetRefs name `refNamespace`. */
function withVmuserRefs(refNamespace: string, form: 'spec' | 'overrideSpec' = 'spec'): Record<string, unknown> {
  const raw = validRawSpec();
  const zones = raw.zones as Array<Record<string, unknown>>;
  zones[1]!.vmuser = {
    name: 'reads-az-b',
    [form]: { targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-b', namespace: refNamespace }, paths: ['/select/.*'] }] },
  };
  return raw;
}

test('a full spec outside the creation namespaces is refused, naming the field and the chart value', () => {
  const issues = trustIssues('team-a', normalizedSpec(validRawSpec()), STRICT_TRUST_POLICY);
  expect(issues).toEqual([{ path: 'spec.zones[2].vmcluster.spec', message: expect.stringContaining('createNamespaces') }]);
  expect(issues[0]!.message).toContain('"team-a"');
});

test('a full spec in a creation namespace is allowed; overlays are allowed everywhere', () => {
  expect(trustIssues(NS, normalizedSpec(validRawSpec()), CREATE)).toEqual([]);
  const overlays = validRawSpec();
  (overlays.zones as Array<Record<string, unknown>>)[2]!.vmcluster = { name: 'vm-az-c' };
  expect(trustIssues('team-a', normalizedSpec(overlays), STRICT_TRUST_POLICY)).toEqual([]);
});

test.each(['spec', 'overrideSpec'] as const)('VMUser targetRefs (%s) into another namespace are refused unless enabled', (form) => {
  const spec = normalizedSpec(withVmuserRefs('other', form));
  const path = `spec.zones[1].vmuser.${form}.targetRefs[0].crd.namespace`;
  expect(trustIssues(NS, spec, CREATE)).toEqual(expect.arrayContaining([{ path, message: expect.stringContaining('allowCrossNamespaceTargetRefs') }]));
  expect(trustIssues(NS, spec, { ...CREATE, crossNamespaceTargetRefs: true }).filter((i) => i.path === path)).toEqual([]);
  // the object's own namespace, or "" (the operator's "this namespace"), is fine
  expect(trustIssues(NS, normalizedSpec(withVmuserRefs(NS, form)), CREATE)).toEqual([]);
  expect(trustIssues(NS, normalizedSpec(withVmuserRefs('', form)), CREATE)).toEqual([]);
});

test('a VMAuth defaultTargetRefs crd naming another namespace is refused too', () => {
  const raw = validRawSpec();
  raw.vmauth = {
    name: 'vm-global',
    overrideSpec: { defaultTargetRefs: [{ name: 'all', crd: { kind: 'VMCluster/vmselect', name: 'x', namespace: 'kube-system' } }] },
  };
  expect(trustIssues(NS, normalizedSpec(raw), CREATE)).toEqual([
    { path: 'spec.vmauth.overrideSpec.defaultTargetRefs[0].crd.namespace', message: expect.stringContaining('allowCrossNamespaceTargetRefs') },
  ]);
});

test('crd.objects[].namespace and the VMAuth unauthorized targetRefs are checked too', () => {
  const raw = validRawSpec();
  raw.vmauth = {
    name: 'vm-global',
    overrideSpec: {
      unauthorizedUserAccessSpec: {
        targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: [{ name: 'x', namespace: 'kube-system' }] }, paths: ['/.*'] }],
      },
    },
  };
  expect(trustIssues(NS, normalizedSpec(raw), CREATE)).toEqual([
    { path: 'spec.vmauth.overrideSpec.unauthorizedUserAccessSpec.targetRefs[0].crd.objects[0].namespace', message: expect.stringContaining('"kube-system"') },
  ]);
});

test('validateUnderPolicy: the schema first, then the policy', () => {
  expect(validateUnderPolicy({ zones: 'nope' }, NS, CREATE).success).toBe(false);
  const r = validateUnderPolicy(validRawSpec(), 'team-a', STRICT_TRUST_POLICY);
  expect(r.success).toBe(false);
  expect(validateUnderPolicy(validRawSpec(), NS, CREATE).success).toBe(true);
});

describe('legitimate specs of the repository pass under the policy the e2e beds use', () => {
  const vmdcs = exampleObjects().filter(([, o]) => o.kind === 'VMDistributedCluster');

  it('there are examples to judge (full specs among them)', () => {
    expect(vmdcs.map(([f]) => f)).toEqual(expect.arrayContaining(['vmdc-basic.yaml', 'vmdc-full-spec.yaml', 'vmdc-minimal.yaml']));
  });

  it.each(vmdcs)('examples/%s', (_file, o) => {
    const ns = (o.metadata as { namespace: string }).namespace;
    expect(trustIssues(ns, normalizedSpec(o.spec), { ...STRICT_TRUST_POLICY, createNamespaces: [ns] })).toEqual([]);
  });

  it('the overlay-only examples pass the STRICT policy itself', () => {
    for (const [file, o] of vmdcs.filter(([f]) => f !== 'vmdc-full-spec.yaml')) {
      expect([file, trustIssues((o.metadata as { namespace: string }).namespace, normalizedSpec(o.spec), STRICT_TRUST_POLICY)]).toEqual([file, []]);
    }
  });

  it('the unit fixtures spec (validRawSpec)', () => {
    expect(trustIssues(NS, normalizedSpec(validRawSpec()), CREATE)).toEqual([]);
  });
});

describe('hosts (api/trust/hosts.ts)', () => {
  it.each([
    ['http://vminsert', 'vminsert'],
    ['http://u:p@VMInsert.Monitoring.svc:8480/x?y', 'vminsert.monitoring.svc'],
    ['http://a@b@evil.example.com/', undefined], // two "@": outside the grammar
    ['http://[0:0:0:0:0:0:0:1]:1/', '[::1]'],
    ['http://127.1/', undefined],
    ['http://0x7f.0.0.1/', undefined],
    ['http://evil.example.com%2f@x/', 'x'], // an escaped "/" in user information: the host is x, for Go's url.Parse too
    ['HTTP://evil.example.com/', undefined],
    ['ftp://evil.example.com/', undefined],
  ])('urlHost(%j) = %j', (url, host) => {
    expect(urlHost(url)).toBe(host);
  });

  it.each([
    ['vminsert', true],
    ['vminsert.monitoring', true],
    ['vminsert.monitoring.svc', true],
    ['vminsert.monitoring.svc.cluster.local', true],
    ['vminsert.monitoring.svc.cluster.local.', true],
    ['vminsert.', false],
    ['vminsert.monitoring.svc.', false],
    ['vminsert.other.svc', false],
    ['a.vminsert.monitoring.svc', false],
    ['vminsert.monitoring.svc.cluster.local.evil.com', false],
    ['10.0.0.1', false],
    ['1vminsert', false],
  ])('isNamespaceService(%j, "monitoring") = %j', (host, yes) => {
    expect(isNamespaceService(host, NS)).toBe(yes);
  });

  it('allow lists: exact (trailing dot ignored), *.domain below the domain only, IPv6 compared canonically', () => {
    expect(inAllowList('evil.example.com.', ['evil.example.com'])).toBe(true);
    expect(inAllowList('evil.example.com', ['Evil.Example.com.'])).toBe(true);
    expect(inAllowList('a.b.example.com', ['*.example.com'])).toBe(true);
    expect(inAllowList('example.com', ['*.example.com'])).toBe(false);
    expect(inAllowList('evilexample.com', ['*.example.com'])).toBe(false);
    expect(inAllowList('[::1]', ['[0::1]'])).toBe(true);
    expect(inAllowList('10.0.0.5', ['10.0.0.50'])).toBe(false);
  });

  it('a denial never quotes the URL (it may carry a password)', () => {
    expect(urlHostProblem('http://u:hunter2@evil.example.com/', NS, [])).not.toContain('hunter2');
    expect(urlHostProblem('http://u:hunter2@evil .example.com/', NS, [])).not.toContain('hunter2');
  });
});

test('namespace selectors: only a requirement pinning kubernetes.io/metadata.name to the namespace keeps selection in it', () => {
  const name = 'kubernetes.io/metadata.name';
  expect(pinsNamespace({ matchLabels: { [name]: NS } }, NS)).toBe(true);
  expect(pinsNamespace({ matchLabels: { team: 'a' }, matchExpressions: [{ key: name, operator: 'In', values: [NS] }] }, NS)).toBe(true);
  expect(pinsNamespace({}, NS)).toBe(false);
  expect(pinsNamespace({ matchLabels: { [name]: 'other' } }, NS)).toBe(false);
  expect(pinsNamespace({ matchExpressions: [{ key: name, operator: 'NotIn', values: ['other'] }] }, NS)).toBe(false);
  expect(pinsNamespace({ matchExpressions: [{ key: name, operator: 'In', values: [] }] }, NS)).toBe(false);
});

test('image repositories: the official ones always, others exactly or below "prefix/*"', () => {
  expect(repositoryAllowed('victoriametrics/vmselect', [])).toBe(true);
  expect(repositoryAllowed('quay.io/victoriametrics/vmagent', [])).toBe(true);
  expect(repositoryAllowed('victoriametrics', [])).toBe(false);
  expect(repositoryAllowed('index.docker.io/victoriametrics/vmselect', [])).toBe(false);
  expect(repositoryAllowed('registry.internal:5000/mirror/vm/vmselect', ['registry.internal:5000/mirror/*'])).toBe(true);
  expect(repositoryAllowed('registry.internal:5000/mirrored/vmselect', ['registry.internal:5000/mirror/*'])).toBe(false);
  expect(referenceRepository('registry.internal:5000/x/y:v1@sha256:abc')).toBe('registry.internal:5000/x/y');
  expect(referenceRepository('registry.internal:5000/x/y')).toBe('registry.internal:5000/x/y');
});

test('extraArgs flags: those naming an address or a configuration source, not the ones the repository uses', () => {
  for (const f of [
    '-remoteWrite.url',
    'remoteWrite.URL',
    '--promscrape.config',
    'remoteWrite.urlRelabelConfig',
    'storageNode',
    'selectNode',
    'auth.config',
    'envflag.enable',
    'dst',
  ])
    expect([f, isDestinationFlag(f)]).toEqual([f, true]);
  for (const f of [
    'remoteWrite.showURL',
    'remoteWrite.flushInterval',
    'promscrape.suppressDuplicateScrapeTargetErrors',
    'search.maxConcurrentRequests',
    'promscrape.config.strictParse',
    'loggerLevel',
  ])
    expect([f, isDestinationFlag(f)]).toEqual([f, false]);
});
