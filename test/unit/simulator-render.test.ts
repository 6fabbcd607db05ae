// The zone simulator (test stand-in for the VM operator) renders vmauth configs from
// VMAuth/VMUser targetRefs. These tests pin that rendering, which the e2e invariants rely on.
import { DEFAULT_SELECT_PATHS, renderVmauthConfig, routedZones, zonesOutOfRotation, type ZoneBackend } from '../simulator/render';

const zones: ZoneBackend[] = [
  { namespace: 'default', name: 'vm-az-a', url: 'http://127.0.0.1:1001' },
  { namespace: 'default', name: 'vm-az-b', url: 'http://127.0.0.1:1002' },
  { namespace: 'default', name: 'vm-az-c', url: 'http://127.0.0.1:1003' },
];

const vmauth = (targetRefs: unknown[], generation = 3) =>
  ({ metadata: { name: 'vm-global', namespace: 'default', generation }, spec: { unauthorizedUserAccessSpec: { targetRefs } } }) as never;

describe('renderVmauthConfig', () => {
  it('maps crd.objects of a VMCluster/vmselect targetRef to a load-balanced url_prefix list', () => {
    const { config, warnings } = renderVmauthConfig(
      vmauth([
        {
          crd: { kind: 'VMCluster/vmselect', objects: [{ name: 'vm-az-a', namespace: 'default' }, { name: 'vm-az-b' }, { name: 'vm-az-c', namespace: 'default' }] },
          paths: ['/api/v1/query.*'],
        },
      ]),
      [],
      zones,
    );
    expect(warnings).toEqual([]);
    expect(config).toEqual({
      unauthorized_user: { url_map: [{ src_paths: ['/api/v1/query.*'], url_prefix: ['http://127.0.0.1:1001', 'http://127.0.0.1:1002', 'http://127.0.0.1:1003'] }] },
    });
  });

  it('maps crd.name targetRefs one per url_map entry, with the default read paths', () => {
    const { config } = renderVmauthConfig(
      vmauth([{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: 'default' } }, { crd: { kind: 'VMCluster/vmselect', name: 'vm-az-c' } }]),
      [],
      zones,
    );
    expect(config.unauthorized_user?.url_map).toEqual([
      { src_paths: DEFAULT_SELECT_PATHS, url_prefix: ['http://127.0.0.1:1001'] },
      { src_paths: DEFAULT_SELECT_PATHS, url_prefix: ['http://127.0.0.1:1003'] },
    ]);
  });

  it('keeps static URLs and pass-through options, warns about unknown clusters and other kinds', () => {
    const { config, warnings } = renderVmauthConfig(
      vmauth([
        { static: { urls: ['http://10.0.0.9:8481', 'http://10.0.0.9:8481'] }, paths: ['/x'], load_balancing_policy: 'first_available', retry_status_codes: [502] },
        { crd: { kind: 'VMCluster/vmselect', objects: [{ name: 'vm-gone' }] } },
        { crd: { kind: 'VMAgent', name: 'a' } },
      ]),
      [],
      zones,
    );
    expect(config.unauthorized_user?.url_map).toEqual([
      { src_paths: ['/x'], url_prefix: ['http://10.0.0.9:8481'], load_balancing_policy: 'first_available', retry_status_codes: [502] },
    ]);
    expect(warnings.join('\n')).toMatch(/VMCluster default\/vm-gone has no zone process/);
    expect(warnings.join('\n')).toMatch(/crd.kind "VMAgent" is not routed/);
    expect(warnings.join('\n')).toMatch(/targetRefs\[1\]: no backend, not rendered/);
  });

  it('omits unauthorized_user when no targetRef has a backend, and renders VMUsers sorted with credentials', () => {
    const { config } = renderVmauthConfig(
      vmauth([]),
      [
        { metadata: { name: 'reads-b', namespace: 'default' }, spec: { bearerToken: 'tok-b', targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-b' } }] } },
        { metadata: { name: 'reads-a', namespace: 'default' }, spec: { password: 'pw', targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a' } }] } },
        { metadata: { name: 'empty', namespace: 'default' }, spec: { targetRefs: [] } },
      ] as never,
      zones,
    );
    expect(config.unauthorized_user).toBeUndefined();
    expect(config.users).toEqual([
      { username: 'reads-a', password: 'pw', url_map: [{ src_paths: DEFAULT_SELECT_PATHS, url_prefix: ['http://127.0.0.1:1001'] }] },
      { bearer_token: 'tok-b', url_map: [{ src_paths: DEFAULT_SELECT_PATHS, url_prefix: ['http://127.0.0.1:1002'] }] },
    ]);
  });
});

describe('routedZones / zonesOutOfRotation', () => {
  it('tells which zones each route reaches and which left rotation', () => {
    const all = renderVmauthConfig(vmauth([{ crd: { kind: 'VMCluster/vmselect', objects: zones.map((z) => ({ name: z.name })) } }]), [], zones).config;
    const minusB = renderVmauthConfig(vmauth([{ crd: { kind: 'VMCluster/vmselect', objects: [{ name: 'vm-az-a' }, { name: 'vm-az-c' }] } }]), [], zones).config;
    const base = routedZones(all, zones);
    expect(base).toEqual({ unauthorized: ['vm-az-a', 'vm-az-b', 'vm-az-c'] });
    expect(zonesOutOfRotation(base, routedZones(minusB, zones))).toEqual(['vm-az-b']);
    expect(zonesOutOfRotation(base, base)).toEqual([]);
    expect(zonesOutOfRotation(base, {})).toEqual(['vm-az-a', 'vm-az-b', 'vm-az-c']);
  });
});
