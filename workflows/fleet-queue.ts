// A fleet's members, queued and running: which member's generation starts next, one per region.
// Pure (no workflow API): the fleet workflow (workflows/fleet.ts) feeds it the trigger's requests
// and its children's ends, and starts what it says.
//
// Why one child per region is one zone per region: each rollout takes at most one zone out of
// reads at a time (beside the zones its spec holds out), so one running child per region is at
// most one zone out per region. A member never has two children at once: a newer generation waits
// for the running one to end (the trigger tells that one it is superseded), and then goes first in
// its region, before any other member, because the superseded child may have left its zone out for
// its successor to take over.
import { FLEET_ENDED_KEPT, FLEET_MAX_QUEUED, type FleetEnded, type FleetInput, type FleetMemberRef, type FleetMemberRequest } from '../api/fleet-contract';
import { DNS1123_LABEL_PATTERN, LIMITS } from '../api/limits';
import { workflowIdFor } from '../api/rollout-contract';

const LABEL = new RegExp(DNS1123_LABEL_PATTERN);
const REFUSED_KEPT = 20;

export interface Queued extends FleetMemberRef {
  request: FleetMemberRequest;
}

/** Why a request cannot be queued by this fleet, or undefined. The signal is anyone's to send: nothing in it is trusted. */
export function refusal(req: unknown, fleet: FleetInput): string | undefined {
  const r = req as Partial<FleetMemberRequest> | undefined;
  const o = r?.input?.object;
  if (!o || typeof o.name !== 'string' || typeof o.namespace !== 'string' || typeof o.uid !== 'string' || !Number.isSafeInteger(o.generation))
    return 'not a member request';
  const who = `${o.namespace}/${o.name}`;
  if (o.namespace !== fleet.namespace) return `${who}: not in namespace ${fleet.namespace}`;
  const m = r.input?.spec?.fleet;
  if (m?.name !== fleet.name) return `${who}: its spec names fleet ${JSON.stringify(m?.name ?? null)}, not ${fleet.name}`;
  if (typeof m.region !== 'string' || m.region.length > LIMITS.zoneNameMaxLength || !LABEL.test(m.region)) return `${who}: its region is not a DNS-1123 label`;
  if (r.workflowId !== workflowIdFor(o)) return `${who}: workflow id ${JSON.stringify(r.workflowId)} is not its generation's`;
  if (typeof r.specHash !== 'string') return `${who}: no spec hash`;
  return undefined;
}

export class FleetQueue {
  /** Member name → its newest generation waiting; Map order is arrival order (a newer generation keeps its member's place). */
  private readonly queued = new Map<string, Queued>();
  /** Region → its running child. */
  private readonly running = new Map<string, Queued>();
  /** Member name → the region its last child ended in (that member's next generation goes first there). */
  private readonly endedIn = new Map<string, string>();
  private readonly endedList: FleetEnded[] = [];
  private readonly refusedList: string[] = [];

  constructor(private readonly fleet: FleetInput) {}

  /** Queues the request (a newer generation replaces its member's older one), or says why not. */
  admit(req: unknown, now: string): string | undefined {
    const why = refusal(req, this.fleet) ?? this.conflict(req as FleetMemberRequest);
    if (why !== undefined) {
      if (why) this.refuse(why);
      return why || undefined;
    }
    const r = req as FleetMemberRequest;
    const member = r.input.object.name;
    this.queued.set(member, { member, region: r.input.spec.fleet!.region, workflowId: r.workflowId, since: now, request: r });
    return undefined;
  }

  /** '' for a request already queued or running (a repeated signal: nothing to do), a reason to refuse it, or undefined. */
  private conflict(r: FleetMemberRequest): string | undefined {
    const member = r.input.object.name;
    const runningNow = [...this.running.values()].find((q) => q.member === member);
    const waiting = this.queued.get(member);
    if (runningNow?.workflowId === r.workflowId || waiting?.workflowId === r.workflowId) return '';
    const newest = Math.max(runningNow?.request.input.object.generation ?? 0, waiting?.request.input.object.generation ?? 0);
    if (r.input.object.generation < newest) return `${this.fleet.namespace}/${member}: generation ${r.input.object.generation} is older than ${newest}`;
    if (!waiting && this.queued.size >= FLEET_MAX_QUEUED) return `${this.fleet.namespace}/${member}: the fleet already queues ${FLEET_MAX_QUEUED} members`;
    return undefined;
  }

  private refuse(why: string): void {
    this.refusedList.push(why);
    if (this.refusedList.length > REFUSED_KEPT) this.refusedList.shift();
  }

  /** What may start now: per region without a running child, the member whose child just ended there, else the first queued; never a member still running. */
  startable(): Queued[] {
    const busy = new Set([...this.running.values()].map((q) => q.member));
    const picked = new Map<string, Queued>();
    for (const q of this.queued.values()) {
      if (this.running.has(q.region) || busy.has(q.member)) continue;
      const current = picked.get(q.region);
      if (!current || (this.endedIn.get(q.member) === q.region && this.endedIn.get(current.member) !== q.region)) picked.set(q.region, q);
    }
    return [...picked.values()];
  }

  started(q: Queued, now: string): void {
    this.queued.delete(q.member);
    this.running.set(q.region, { ...q, since: now });
  }

  ended(q: Queued, outcome: string, now: string): void {
    if (this.running.get(q.region)?.workflowId === q.workflowId) this.running.delete(q.region);
    this.endedIn.delete(q.member);
    this.endedIn.set(q.member, q.region);
    if (this.endedIn.size > FLEET_MAX_QUEUED) this.endedIn.delete(this.endedIn.keys().next().value!);
    this.endedList.push({ member: q.member, region: q.region, workflowId: q.workflowId, since: now, outcome });
    if (this.endedList.length > FLEET_ENDED_KEPT) this.endedList.shift();
  }

  /** Takes every queued member out (the fleet is cancelled: none of them will start). */
  drain(): Queued[] {
    const all = [...this.queued.values()];
    this.queued.clear();
    return all;
  }

  idle(): boolean {
    return this.queued.size === 0 && this.running.size === 0;
  }

  view() {
    const ref = ({ member, region, workflowId, since }: Queued): FleetMemberRef => ({ member, region, workflowId, since });
    return {
      running: [...this.running.values()].map(ref),
      queued: [...this.queued.values()].map(ref),
      ended: [...this.endedList],
      refused: [...this.refusedList],
    };
  }
}
