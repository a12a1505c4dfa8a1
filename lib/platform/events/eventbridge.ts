// The EventBridge adapter: events of one source and type in one PutEvents call, each entry's outcome answered.
import type { EventBridgeClient, PutEventsCommandOutput } from '@aws-sdk/client-eventbridge';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';

/** Publishes JSON details; the answer says, entry by entry, refused (an Error) or published (undefined). */
export type EventBus = (source: string, type: string, details: object[]) => Promise<Array<Error | undefined>>;

/** A bus on EventBridge (at most 10 entries a call); a refused entry is an Error named for its code. */
export function eventBridgeBus(client: EventBridgeClient, busName: string): EventBus {
  return async (source, detailType, details) => {
    let answer: PutEventsCommandOutput;
    try {
      answer = await client.send(
        new PutEventsCommand({
          Entries: details.map((detail) => ({
            EventBusName: busName,
            Source: source,
            DetailType: detailType,
            Detail: JSON.stringify(detail),
          })),
        }),
      );
    } catch (error) {
      // The call as a whole failed (throttled, unreachable): no entry was published.
      const failure = error instanceof Error ? error : new Error(String(error));
      return details.map(() => failure);
    }
    if ((answer.FailedEntryCount ?? 0) === 0) return details.map(() => undefined);
    // A partial failure: the answer's entries are in the order of the request's, each an EventId or an
    // ErrorCode. An entry the answer does not account for counts as refused (retried, never lost).
    return details.map((_, index) => {
      const entry = answer.Entries?.[index];
      if (entry?.EventId && !entry.ErrorCode) return undefined;
      const code = entry?.ErrorCode ?? 'unknown';
      // Named for its code, which is what the outbox keeps of it (`last_error`).
      return Object.assign(new Error(`EventBridge refused the ${detailType} event (${code})`), {
        name: code,
      });
    });
  };
}
