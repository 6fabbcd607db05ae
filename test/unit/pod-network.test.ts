// The pod network stand-in (test/infra/harness/pod-network.ts): which addresses are pods' (TEST-NET-2,
// then RFC 2544's 198.18.0.0/15 once TEST-NET-2's 253 are given out), and the child processes'
// copy of that rule (test/infra/chaos/pod-network-preload.cjs) agreeing with it. No request leaves
// loopback: the child's pod requests go to a gateway played by a server here.
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { POD_NETWORK_PRELOAD } from '../infra/chaos/control-processes';
import { allocatePodIP, isPodAddress, podNetworkFetch, podToLoopback, registerPodPort } from '../infra/harness/pod-network';

/** Both networks' edges and just outside them, and what is no IPv4 address at all. */
const ADDRESSES: Array<[string, boolean]> = [
  ['198.51.100.0', true],
  ['198.51.100.10', true],
  ['198.51.100.255', true],
  ['198.51.99.255', false],
  ['198.51.101.0', false],
  ['198.18.0.0', true],
  ['198.18.0.1', true],
  ['198.19.255.255', true],
  ['198.17.255.255', false],
  ['198.20.0.0', false],
  ['127.0.0.1', false],
  ['10.0.0.1', false],
  ['::ffff:198.18.0.1', false],
  ['[::1]', false],
  ['localhost', false],
  ['198.18.0', false],
  ['', false],
];

/** Runs `script` in a child node process with the preload (and POD_GATEWAY_URL); its stdout. */
function inChild(script: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--require', POD_NETWORK_PRELOAD, '-e', script],
      { env: { PATH: process.env.PATH, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${String(stderr)}`)) : resolve(String(stdout))),
    );
  });
}

describe('pod addresses', () => {
  it.each(ADDRESSES)('%s is a pod address: %s', (ip, expected) => {
    expect(isPodAddress(ip)).toBe(expected);
  });

  it("the preload's copy of the rule agrees on every address", async () => {
    const script = `const { isPodAddress } = require(${JSON.stringify(POD_NETWORK_PRELOAD)});
process.stdout.write(JSON.stringify(${JSON.stringify(ADDRESSES.map(([ip]) => ip))}.map(isPodAddress)));`;
    expect(JSON.parse(await inChild(script))).toEqual(ADDRESSES.map(([, expected]) => expected));
  });

  it('addresses are handed out from TEST-NET-2, then from 198.18.0.0/15, each once', () => {
    const ips = Array.from({ length: 300 }, () => allocatePodIP());
    expect(new Set(ips).size).toBe(300);
    expect(ips.every(isPodAddress)).toBe(true);
    expect(ips[0]).toBe('198.51.100.11');
    expect(ips[243]).toBe('198.51.100.254');
    expect(ips[244]).toBe('198.18.0.1');
    expect(ips[299]).toBe('198.18.0.56');
  });

  it('a 198.18.0.0/15 pod is mapped like a TEST-NET-2 one; an unregistered one is refused; no other address can be registered', async () => {
    const ip = '198.19.3.4';
    const undo = registerPodPort(ip, 8429, 41_234);
    expect(podToLoopback(`http://${ip}:8429/metrics?a=1`)).toBe('http://127.0.0.1:41234/metrics?a=1');
    undo();
    expect(podToLoopback(`http://${ip}:8429/metrics`)).toBe(`http://${ip}:8429/metrics`);
    await expect(podNetworkFetch(`http://${ip}:8429/metrics`)).rejects.toThrow(/connection refused: no pod listens at 198\.19\.3\.4:8429/);
    expect(() => registerPodPort('198.20.0.1', 8429, 41_234)).toThrow(/not a pod address/);
  });
});

describe("a child's fetch (the preload)", () => {
  let gateway: http.Server;
  const seen: string[] = [];
  beforeAll(async () => {
    gateway = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      res.end(`gateway ${req.url}`);
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', () => resolve()));
  });
  afterAll(() => new Promise<void>((resolve) => gateway.close(() => resolve())));

  it('sends requests to pods of both networks to the gateway, and anything else where it was addressed', async () => {
    const port = (gateway.address() as AddressInfo).port;
    const urls = [
      'http://198.51.100.77:8435/metrics',
      'http://198.18.0.9:8429/metrics?x=1',
      'http://198.19.255.254:8481/metrics',
      `http://127.0.0.1:${port}/direct`,
    ];
    const script = `(async () => {
  const out = [];
  for (const u of ${JSON.stringify(urls)}) out.push(await (await fetch(u)).text());
  process.stdout.write(JSON.stringify(out));
})();`;
    const bodies = JSON.parse(await inChild(script, { POD_GATEWAY_URL: `http://127.0.0.1:${port}` })) as string[];
    expect(bodies).toEqual([
      'gateway /198.51.100.77:8435/metrics',
      'gateway /198.18.0.9:8429/metrics?x=1',
      'gateway /198.19.255.254:8481/metrics',
      'gateway /direct',
    ]);
    expect(seen).toEqual(['/198.51.100.77:8435/metrics', '/198.18.0.9:8429/metrics?x=1', '/198.19.255.254:8481/metrics', '/direct']);
  });
});
