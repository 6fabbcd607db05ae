// A workflow's Temporal history as the benchmarks count it.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

/** An event's time (the server's clock), in ms. */
export const eventTimeMs = (e: HistoryEvent): number => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

/** Every event of a workflow execution, all runs of a continue-as-new chain included. */
export async function fullHistory(client: Client, workflowId: string, firstRunId: string): Promise<{ events: HistoryEvent[]; runs: number }> {
  const events: HistoryEvent[] = [];
  let runId: string | undefined = firstRunId;
  let runs = 0;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const evs: HistoryEvent[] = history.events ?? [];
    events.push(...evs);
    runs++;
    runId = evs.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return { events, runs };
}

/** How many events of each type (EVENT_TYPE_ dropped), in a Map: the names come from the history. */
export function eventTypeCounts(events: HistoryEvent[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const e of events) {
    const name = (EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
}
