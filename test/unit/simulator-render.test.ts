// The zone simulator (test stand-in for the VM operator v0.74.1) renders the vmauth config
// Secret from VMAuth/VMUser targetRefs the operator's way (factory/vmauth/vmusers_config.go).
// These tests pin that rendering, which the e2e invariants and vmrollout's pod checks rely on.
import * as zlib from 'node:zlib';
import { parse } from 'yaml';
import {
  configHash,
  gzipConfig,
  renderVmauthConfig,
  resolveServiceURLs,
  routedZones,
  selectUsers,
  vmclusterURL,
  vmsingleURL,
  zoneBackends,
  zonesOutOfRotation,
} from '../infra/simulator/render';

const NS = 'default';
const vmc = (name: string, vmselect: object | null = {}, ns = NS) =>
  ({ metadata: { name, namespace: ns }, spec: vmselect === null ? {} : { vmselect } }) as never;
const clusters = [vmc('vm-az-a'), vmc('vm-az-b'), vmc('vm-az-c')];
const url = (n: string) => `http://vmselect-${n}.${NS}.svc:8481`;
const A = url('vm-az-a');
const B = url('vm-az-b');
const C = url('vm-az-c');

const vmauth = (targetRefs: unknown[] | undefined, extra: object = {}) =>
  ({
    metadata: { name: 'vm-global', namespace: NS, generation: 3 },
    spec: { selectAllByDefault: true, ...(targetRefs ? { unauthorizedUserAccessSpec: { targetRefs } } : {}), ...extra },
  }) as never;
const user = (name: string, spec: object, labels?: Record<string, string>) => ({ metadata: { name, namespace: NS, generation: 1, labels }, spec }) as never;
const sel = (objects: Array<{ name: string; namespace?: string }>, name = '', namespace = '') => ({
  crd: { kind: 'VMCluster/vmselect', name, namespace, objects },
});

describe('VMCluster.AsURL', () => {
  it('is the vmselect service URL, port and scheme from the spec, "" without spec.vmselect', () => {
    expect(vmclusterURL(vmc('vm-az-a'))).toBe('http://vmselect-vm-az-a.default.svc:8481');
    expect(vmclusterURL(vmc('x', { port: '9000', extraArgs: { tls: 'true' } }, 'mon'))).toBe('https://vmselect-x.mon.svc:9000');
    expect(vmclusterURL(vmc('x', null))).toBe('');
    expect(vmclusterURL(vmc('x', {}), 'VMCluster/vminsert')).toBe('');
    expect(zoneBackends(clusters)).toEqual([
      { namespace: NS, name: 'vm-az-a', url: A },
      { namespace: NS, name: 'vm-az-b', url: B },
      { namespace: NS, name: 'vm-az-c', url: C },
    ]);
  });
});

describe('VMSingle (vmsingle_types.go AsURL)', () => {
  const vms = (name: string, spec: object = {}) => ({ metadata: { name, namespace: NS }, spec }) as never;
  const S = 'http://vmsingle-vm-single-c.default.svc:8428';
  const T = 'http://vmsingle-vm-single-d.default.svc:8428';
  const single = (objects: Array<{ name: string; namespace: string }>, name = '', namespace = '') => ({ crd: { kind: 'VMSingle', name, namespace, objects } });
  const singles = [vms('vm-single-c'), vms('vm-single-d')];

  it('is the vmsingle service URL, port 8428 when spec.port is unset (read without defaults: the real-operator bed renders it so) or spec.port, https with extraArgs.tls', () => {
    expect(vmsingleURL(vms('vm-single-c'))).toBe(S);
    expect(vmsingleURL(vms('x', { port: '8429', extraArgs: { tls: 'true' } }))).toBe('https://vmsingle-x.default.svc:8429');
    expect(zoneBackends([clusters[0]!], singles)).toEqual([
      { namespace: NS, name: 'vm-az-a', url: A },
      { namespace: NS, name: 'vm-single-c', url: S, kind: 'VMSingle' },
      { namespace: NS, name: 'vm-single-d', url: T, kind: 'VMSingle' },
    ]);
  });

  it('a VMSingle ref renders its URLs, src_paths ["/.*"] by default (the fast path with one ref); beside a VMCluster ref, its own url_map entry', () => {
    const fast = renderVmauthConfig(vmauth([single([{ name: 'vm-single-d', namespace: NS }], 'vm-single-c', NS)]), [], clusters, singles);
    expect(fast.config).toEqual({ unauthorized_user: { url_prefix: [S, T] } });
    const mixed = renderVmauthConfig(
      vmauth([{ ...sel([{ name: 'vm-az-b', namespace: NS }], 'vm-az-a', NS), paths: ['/select/.*'] }, single([{ name: 'vm-single-c', namespace: NS }])]),
      [],
      clusters,
      singles,
    );
    expect(mixed.config).toEqual({
      unauthorized_user: {
        url_map: [
          { url_prefix: [A, B], src_paths: ['/select/.*'] },
          { url_prefix: [S], src_paths: ['/.*'] },
        ],
      },
    });
    expect(routedZones(mixed.config, zoneBackends(clusters, singles))).toEqual({ unauthorized: ['vm-az-a', 'vm-az-b', 'vm-single-c'] });
  });

  it('a VMSingle ref naming no VMSingle (a VMCluster of that name does not count) fails as the operator does', () => {
    const r = renderVmauthConfig(vmauth([single([{ name: 'vm-az-a', namespace: NS }])]), [], clusters, singles);
    expect(r.vmauthError).toBe(
      'failed to fetch spec.unauthorizedUserAccessSpec.targetRefs[0]: cannot find CRD link for kind="VMSingle": cannot find object by the given ref,namespace="default",name="vm-az-a": vmsingles.operator.victoriametrics.com "vm-az-a" not found',
    );
  });
});

describe('renderVmauthConfig (operator format)', () => {
  it('crd.name counts only with crd.namespace; crd.objects by exact name+namespace; url_map with the given paths', () => {
    const r = renderVmauthConfig(
      vmauth([{ ...sel([{ name: 'vm-az-b', namespace: NS }], 'vm-az-a', NS), paths: ['/select/.+/prometheus/api/v1/query.*', '/x'] }]),
      [],
      clusters,
    );
    expect(r.vmauthError).toBeUndefined();
    expect(r.config).toEqual({ unauthorized_user: { url_map: [{ url_prefix: [A, B], src_paths: ['/select/.+/prometheus/api/v1/query.*', '/x'] }] } });
    // name without namespace: not counted (only the objects)
    const r2 = renderVmauthConfig(vmauth([{ ...sel([{ name: 'vm-az-c', namespace: NS }], 'vm-az-a', ''), paths: ['/a', '/b'] }]), [], clusters);
    expect(r2.config.unauthorized_user?.url_map?.[0]?.url_prefix).toEqual([C]);
  });

  it('uses the single-default-route fast path (url_prefix on the route) and the vmselect default src_paths', () => {
    const fast = renderVmauthConfig(
      vmauth([
        sel([
          { name: 'vm-az-a', namespace: NS },
          { name: 'vm-az-b', namespace: NS },
        ]),
      ]),
      [],
      clusters,
    );
    expect(fast.config).toEqual({ unauthorized_user: { url_prefix: [A, B] } });
    const two = renderVmauthConfig(
      vmauth([
        sel([{ name: 'vm-az-a', namespace: NS }]),
        { ...sel([{ name: 'vm-az-c', namespace: NS }]), retry_status_codes: [502], load_balancing_policy: 'first_available' },
      ]),
      [],
      clusters,
    );
    expect(two.config.unauthorized_user?.url_map).toEqual([
      { url_prefix: [A], src_paths: ['/select/.*', '/admin/.*'] },
      { url_prefix: [C], src_paths: ['/select/.*', '/admin/.*'], retry_status_codes: [502], load_balancing_policy: 'first_available' },
    ]);
    // the written YAML keeps the operator's key order: url_prefix before src_paths
    expect(two.yaml.indexOf('url_prefix')).toBeLessThan(two.yaml.indexOf('src_paths'));
    expect(parse(two.yaml)).toEqual(two.config);
  });

  it('fails the whole VMAuth when its unauthorizedUserAccessSpec names a VMCluster that does not exist', () => {
    const r = renderVmauthConfig(vmauth([sel([{ name: 'vm-gone', namespace: NS }])]), [], clusters);
    expect(r.vmauthError).toBe(
      'failed to fetch spec.unauthorizedUserAccessSpec.targetRefs[0]: cannot find CRD link for kind="VMCluster/vmselect": cannot find object by the given ref,namespace="default",name="vm-gone": vmclusters.operator.victoriametrics.com "vm-gone" not found',
    );
    // the wrong namespace is a different object
    expect(renderVmauthConfig(vmauth([sel([{ name: 'vm-az-a', namespace: 'other' }])]), [], clusters).vmauthError).toMatch(/namespace="other",name="vm-az-a"/);
    // a route with no target at all
    expect(renderVmauthConfig(vmauth([]), [], clusters).vmauthError).toBe(
      'cannot build unauthorized_user config section: cannot generate urlMaps for user: user must have at least 1 url target',
    );
    // a VMCluster without spec.vmselect has no vmselect URL
    expect(renderVmauthConfig(vmauth([sel([{ name: 'x', namespace: NS }])]), [], [vmc('x', null)]).vmauthError).toMatch(
      /cannot find crdRef target: "VMCluster\/vmselect\/default\/x", for user: unauthorized_user/,
    );
  });

  it('skips a VMUser whose refs name no VMCluster (its error recorded), renders the others in namespace/name order', () => {
    const r = renderVmauthConfig(
      vmauth(undefined),
      [
        user('reads-b', { bearerToken: 'tok-b', targetRefs: [sel([{ name: 'vm-az-b', namespace: NS }])] }),
        user('reads-gone', { bearerToken: 'tok-x', targetRefs: [sel([{ name: 'vm-gone', namespace: NS }])] }),
        user('reads-a', { name: 'reader-a', password: 'pw', targetRefs: [sel([{ name: 'vm-az-a', namespace: NS }])] }),
        user('reads-c', { username: 'carol', targetRefs: [{ static: { url: 'http://10.0.0.9:8481' } }] }),
      ],
      clusters,
    );
    expect(r.vmauthError).toBeUndefined();
    expect(r.selectedUsers).toEqual(['reads-a', 'reads-b', 'reads-c', 'reads-gone']);
    expect(r.userErrors).toEqual({
      'reads-gone':
        'failed to fetch VMUser=default/reads-gone spec.targetRefs[0]: cannot find CRD link for kind="VMCluster/vmselect": cannot find object by the given ref,namespace="default",name="vm-gone": vmclusters.operator.victoriametrics.com "vm-gone" not found',
    });
    expect(r.config).toEqual({
      users: [
        { url_prefix: [A], name: 'reader-a', username: 'reads-a', password: 'pw' },
        { url_prefix: [B], bearer_token: 'tok-b' },
        { url_prefix: ['http://10.0.0.9:8481'], username: 'carol' },
      ],
    });
    expect(routedZones(r.config, zoneBackends(clusters))).toEqual({ 'user:reader-a': ['vm-az-a'], 'user:tok-b': ['vm-az-b'], 'user:carol': [] });
  });

  it('a VMUser with no targetRefs fails with the operator error', () => {
    const r = renderVmauthConfig(vmauth(undefined), [user('u', { bearerToken: 't', targetRefs: [] })], clusters);
    expect(r.userErrors).toEqual({ u: 'cannot generate urlMaps for user: user must have at least 1 url target' });
    expect(r.config).toEqual({});
  });

  it('selects users only with selectAllByDefault or a userSelector (matchLabels)', () => {
    const users = [user('a', {}, { team: 'x' }), user('b', {}, { team: 'y' })];
    const auth = (spec: object) => ({ metadata: { name: 'v', namespace: NS }, spec }) as never;
    expect(selectUsers(auth({}), users)).toEqual([]);
    expect(selectUsers(auth({ selectAllByDefault: true }), users).map((u) => u.metadata?.name)).toEqual(['a', 'b']);
    expect(selectUsers(auth({ userSelector: { matchLabels: { team: 'y' } } }), users).map((u) => u.metadata?.name)).toEqual(['b']);
  });
});

describe('the Secret bytes', () => {
  it('are the gzipped YAML, deterministic, hashed with CRC32-IEEE as an unsigned integer', () => {
    const r = renderVmauthConfig(vmauth([sel([{ name: 'vm-az-a', namespace: NS }])]), [], clusters);
    const gz = gzipConfig(r.yaml);
    expect(gzipConfig(r.yaml).equals(gz)).toBe(true);
    expect(zlib.gunzipSync(gz).toString('utf8')).toBe(r.yaml);
    expect(r.yaml).toBe(`unauthorized_user:\n  url_prefix:\n  - ${A}\n`);
    const h = configHash(gz);
    expect(h).toBe(zlib.crc32(gz) >>> 0);
    expect(h).toBeGreaterThanOrEqual(0);
    expect(h).toBeLessThan(2 ** 32);
    expect(configHash(Buffer.from('The quick brown fox jumps over the lazy dog'))).toBe(0x414fa339);
  });
});

describe('the config-reloader stand-in (cluster DNS) / routedZones / zonesOutOfRotation', () => {
  it('maps service origins to loopback, keeping paths; other URLs untouched', () => {
    const cfg = {
      users: [{ url_map: [{ url_prefix: [A, `${B}/x`, 'http://10.0.0.9:1'], src_paths: [A] }], bearer_token: A }],
      unauthorized_user: { url_prefix: [C] },
    };
    expect(resolveServiceURLs(cfg, { [A]: 'http://127.0.0.1:1', [B]: 'http://127.0.0.1:2', [C]: 'http://127.0.0.1:3' })).toEqual({
      users: [{ url_map: [{ url_prefix: ['http://127.0.0.1:1', 'http://127.0.0.1:2/x', 'http://10.0.0.9:1'], src_paths: [A] }], bearer_token: A }],
      unauthorized_user: { url_prefix: ['http://127.0.0.1:3'] },
    });
  });

  it('tells which zones each route reaches and which left rotation', () => {
    const zones = zoneBackends(clusters);
    const all = renderVmauthConfig(
      vmauth([
        {
          ...sel(
            [
              { name: 'vm-az-b', namespace: NS },
              { name: 'vm-az-c', namespace: NS },
            ],
            'vm-az-a',
            NS,
          ),
          paths: ['/a', '/b'],
        },
      ]),
      [],
      clusters,
    ).config;
    const minusB = renderVmauthConfig(vmauth([{ ...sel([{ name: 'vm-az-c', namespace: NS }], 'vm-az-a', NS), paths: ['/a', '/b'] }]), [], clusters).config;
    const base = routedZones(all, zones);
    expect(base).toEqual({ unauthorized: ['vm-az-a', 'vm-az-b', 'vm-az-c'] });
    expect(zonesOutOfRotation(base, routedZones(minusB, zones))).toEqual(['vm-az-b']);
    expect(zonesOutOfRotation(base, base)).toEqual([]);
    expect(zonesOutOfRotation(base, {})).toEqual(['vm-az-a', 'vm-az-b', 'vm-az-c']);
  });
});
