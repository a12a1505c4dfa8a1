// An in-process stand-in for the EventBridge JSON 1.1 API (PutEvents), recording what was put on which bus.
import { randomUUID } from 'node:crypto';

export interface RecordedEvent {
  /** the bus name (an ARN given as EventBusName is reduced to its name); `default` when none was given */
  bus: string;
  source: string;
  detailType: string;
  detail: unknown;
  /** ISO 8601 */
  time: string;
}

export interface FakeEventBridge {
  readonly events: RecordedEvent[];
  handle(operation: string, body: unknown): { status: number; body: unknown };
}

function busName(value: unknown): string {
  if (typeof value !== 'string' || value === '') return 'default';
  const slash = value.indexOf(':event-bus/');
  return value.startsWith('arn:') && slash >= 0 ? value.slice(slash + ':event-bus/'.length) : value;
}

/** The SDK sends Time as epoch seconds (JSON 1.1 timestamps); strings are accepted too. */
function timeOf(value: unknown): string {
  if (typeof value === 'number') return new Date(value * 1000).toISOString();
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return new Date(value).toISOString();
  return new Date().toISOString();
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

type EntryResult = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

export function createFakeEventBridge(): FakeEventBridge {
  const events: RecordedEvent[] = [];

  function putEntry(entry: Record<string, unknown>): EntryResult {
    // Like EventBridge: a bad entry fails on its own, the call as a whole still answers 200.
    for (const field of ['Source', 'DetailType', 'Detail'] as const) {
      if (!nonEmpty(entry[field])) {
        return {
          ErrorCode: 'InvalidArgument',
          ErrorMessage: `Parameter ${field} is not valid. Reason: ${field} is a required argument.`,
        };
      }
    }
    let detail: unknown;
    try {
      detail = JSON.parse(entry.Detail as string);
    } catch {
      return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
    }
    if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) {
      return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
    }
    events.push({
      bus: busName(entry.EventBusName),
      source: entry.Source as string,
      detailType: entry.DetailType as string,
      detail,
      time: timeOf(entry.Time),
    });
    return { EventId: randomUUID() };
  }

  return {
    events,
    handle(operation, body) {
      if (operation !== 'PutEvents') {
        return {
          status: 400,
          body: { __type: 'UnknownOperationException', message: `Fake EventBridge has no ${operation}` },
        };
      }
      const entries = (body as { Entries?: unknown } | null)?.Entries;
      if (!Array.isArray(entries) || entries.length < 1 || entries.length > 10) {
        return {
          status: 400,
          body: { __type: 'ValidationException', message: 'Entries must hold between 1 and 10 entries' },
        };
      }
      const results = entries.map((entry) =>
        typeof entry === 'object' && entry !== null
          ? putEntry(entry as Record<string, unknown>)
          : { ErrorCode: 'InvalidArgument', ErrorMessage: 'Entry is not an object' },
      );
      const failed = results.filter((result) => 'ErrorCode' in result).length;
      return { status: 200, body: { FailedEntryCount: failed, Entries: results } };
    },
  };
}
