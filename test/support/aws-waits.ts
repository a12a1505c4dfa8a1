// Counts a request's critical-path WAITS on AWS: the times it goes from no AWS call in flight to one. Calls
// sent together (Promise.all) are one wait, because on AWS they cost one round trip's latency, whatever the
// stand-ins' own speed; calls sent one after another are a wait each. Shared by the tests (test/integration/
// waits.test.ts) and the bench (test/perf), installed as a middleware on each SDK client's own stack.
//
// The one other work it knows of is the password hash (argon2, published on the `service:password-hash`
// tracing channel by lib/accounts/passwords.ts). A call made while the password hash runs is off the
// critical path: on AWS the hash (tens of milliseconds at the function's memory) outlasts it (a few
// milliseconds), so the request waits for the hash, not for the call. Such a call opens no wait and holds
// none open (it is taken to end by the time the hash ends, as it does on AWS, however slow the stand-in);
// it is listed as a step of its own, marked `(beside the password hash)`. Which calls those are is read
// from when each was sent, not from how long anything took, so the count does not depend on the machine.

import { tracingChannel } from 'node:diagnostics_channel';
import { PASSWORD_HASH_CHANNEL } from '#lib/accounts/passwords.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { eventBridgeClient } from '#lib/platform/aws/events.ts';
import { kmsClient } from '#lib/platform/aws/kms.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { secretsManagerClient } from '#lib/platform/aws/secrets-manager.ts';
import type { AwsSettings } from '#lib/platform/config/schema.ts';

/** What the middleware needs of any SDK v3 client (the document client shares its client's stack). */
export interface StackClient {
  middlewareStack: {
    add(
      middleware: unknown,
      options: { step: 'initialize' | 'deserialize'; name: string; priority?: 'high' | 'normal' | 'low' },
    ): void;
    remove(name: string): boolean;
  };
}

export interface WaitCount {
  /** Times the AWS calls in flight went from 0 to 1. */
  waits: number;
  /** Every `send`, whatever ran beside it (SDK retries of one send are one call). */
  calls: number;
  /** Calls by `<service>.<Operation>`, e.g. `dynamodb.BatchGetItem`. */
  operations: Record<string, number>;
  /**
   * The steps in order, each the operations that ran inside it (for a readable failure message): every wait,
   * and every group of calls sent while a password hash ran, those marked `(beside the password hash)` and
   * no wait (so there may be more steps than waits).
   */
  steps: string[][];
  /** The same steps with each call's input (only when the counter keeps inputs). */
  sentSteps: SentCall[][];
}

let installs = 0;

/** One call as it was sent (its input copied when it started), for a baseline to send again. */
export interface SentCall {
  service: string;
  /** The operation, e.g. `PutItem`. */
  name: string;
  input: Record<string, unknown>;
}

interface Call {
  operation: string;
  sent_: SentCall;
  /** Order of events (not time): when the send began and when it settled. */
  start: number;
  end: number;
  /** It reached the network: a presigned URL goes through the same stack but stops before sending. */
  sent: boolean;
  /** When (in the same order) it reached the network: a call sent while a password hash runs is beside it. */
  sentAt: number;
}

/** One password hash or verification, in the same order of events as the calls. */
interface Hash {
  start: number;
  end: number;
}

/**
 * Round trips as AWS answers them in one region, roughly: a table call a few milliseconds, an S3 call tens
 * (its first byte; more for large bodies). Used by the waits test so overlaps follow AWS, not the stand-ins.
 */
export function awsRoundTrips(service: string): number {
  return service === 's3' ? 30 : 4;
}

/** The label of a call sent while a password hash ran. */
const BESIDE_HASH = ' (beside the password hash)';

/**
 * One counter over the clients it is installed on. A `send` starts when it enters the `initialize` step
 * (before the SDK's retries and signing, so one send with its retries is one call) and ends when its promise
 * settles; it counts only if it reached the `deserialize` step, where the request goes out (presigning a
 * URL runs the same stack and stops before it). Waits are read from the order of those events.
 */
export class WaitCounter {
  /**
   * `keepInputs`: copy each call's input, so a baseline can send the same calls (the bench's CPU figure).
   * `roundTrip`: milliseconds each sent call's answer is held back, so calls overlap as they do on AWS
   * (awsRoundTrips) rather than as the local stand-ins happen to answer: whether a chain of two table
   * calls fits beside one S3 call must not depend on how fast s3rver was this time.
   */
  constructor(
    private readonly keepInputs = false,
    private readonly roundTrip?: (service: string, operation: string) => number,
  ) {}

  private sequence = 0;
  private calls: Call[] = [];
  private hashes: Hash[] = [];
  private readonly installed: Array<{ client: StackClient; names: string[] }> = [];
  private readonly hashing = tracingChannel<object, object>(PASSWORD_HASH_CHANNEL);
  private readonly running = new WeakMap<object, Hash>();
  private listening = false;
  // The hash's start, and its end: when its promise settled, or, if it threw at once, its synchronous end.
  private readonly hashEvents = {
    start: (context: object) => {
      const hash: Hash = { start: ++this.sequence, end: Number.POSITIVE_INFINITY };
      this.running.set(context, hash);
      this.hashes.push(hash);
    },
    end: (context: object) => {
      if ((context as { error?: unknown }).error !== undefined) this.hashEnded(context);
    },
    asyncStart: () => {},
    asyncEnd: (context: object) => this.hashEnded(context),
    error: () => {},
  };

  private hashEnded(context: object): void {
    const hash = this.running.get(context);
    if (hash && hash.end === Number.POSITIVE_INFINITY) hash.end = ++this.sequence;
  }

  /** Adds the middleware to one client's stack; `service` labels its calls (`dynamodb`, `s3`, `kms` ...). */
  install(client: StackClient, service: string): this {
    if (!this.listening) {
      this.hashing.subscribe(this.hashEvents);
      this.listening = true;
    }
    const id = ++installs;
    const names = [`awsWaitCounter${id}`, `awsWaitCounterSent${id}`];
    const current = new WeakMap<object, Call>();
    client.middlewareStack.add(
      (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
        async (args: unknown) => {
          const name = String(context.commandName ?? 'unknown').replace(/Command$/, '');
          const input = (args as { input: Record<string, unknown> }).input;
          const call: Call = {
            operation: `${service}.${name}`,
            sent_: { service, name, input: this.keepInputs ? structuredClone(input) : {} },
            start: ++this.sequence,
            end: Number.POSITIVE_INFINITY,
            sent: false,
            sentAt: Number.POSITIVE_INFINITY,
          };
          current.set(context, call);
          this.calls.push(call);
          try {
            return await next(args);
          } finally {
            call.end = ++this.sequence;
          }
        },
      { step: 'initialize', name: names[0]!, priority: 'high' },
    );
    client.middlewareStack.add(
      (next: (args: unknown) => Promise<unknown>, context: object) => async (args: unknown) => {
        const call = current.get(context);
        if (call) {
          call.sent = true;
          call.sentAt = ++this.sequence;
        }
        const answer = await next(args);
        const held = call ? (this.roundTrip?.(service, call.sent_.name) ?? 0) : 0;
        if (held > 0) await new Promise((resolve) => setTimeout(resolve, held));
        return answer;
      },
      { step: 'deserialize', name: names[1]!, priority: 'low' },
    );
    this.installed.push({ client, names });
    return this;
  }

  /**
   * The counter on every client this process builds for these settings that a request may wait on:
   * DynamoDB (the document client's stack is its client's), S3, KMS, Secrets Manager and EventBridge.
   */
  installOnAws(aws: AwsSettings): this {
    return this.install(dynamoClient(aws) as unknown as StackClient, 'dynamodb')
      .install(s3Client(aws) as unknown as StackClient, 's3')
      .install(kmsClient(aws) as unknown as StackClient, 'kms')
      .install(secretsManagerClient(aws) as unknown as StackClient, 'secretsmanager')
      .install(eventBridgeClient(aws) as unknown as StackClient, 'events');
  }

  uninstall(): void {
    for (const { client, names } of this.installed.splice(0)) {
      for (const name of names) client.middlewareStack.remove(name);
    }
    if (this.listening) {
      this.hashing.unsubscribe(this.hashEvents);
      this.listening = false;
    }
  }

  /** The waits of `run` alone (run nothing else beside it: the counter is process-wide). */
  async measure(run: () => Promise<unknown>): Promise<WaitCount> {
    if (this.calls.some((call) => call.end === Number.POSITIVE_INFINITY)) {
      throw new Error('AWS calls are still in flight: a wait count would mix requests');
    }
    this.calls = [];
    this.hashes = [];
    await run();
    const counted = countWaits(
      this.calls.filter((call) => call.sent),
      this.hashes,
    );
    this.calls = [];
    this.hashes = [];
    return counted;
  }
}

/**
 * Sweeps the calls' start and end events in order: every time none was in flight and one starts is a wait.
 * A call sent while a password hash ran is no call in flight: it joins the step of the calls sent beside
 * that same hash.
 */
function countWaits(calls: Call[], hashes: Hash[]): WaitCount {
  const hashOf = (call: Call) => hashes.find((hash) => hash.start < call.sentAt && call.sentAt < hash.end);
  const events = calls
    .flatMap((call) => [
      { at: call.start, call, starts: true },
      { at: call.end, call, starts: false },
    ])
    .sort((a, b) => a.at - b.at);
  const count: WaitCount = { waits: 0, calls: calls.length, operations: {}, steps: [], sentSteps: [] };
  const besideSteps = new Map<Hash, number>();
  let inFlight = 0;
  let current = -1;
  for (const event of events) {
    const { call } = event;
    const hash = hashOf(call);
    if (!event.starts) {
      if (!hash) inFlight -= 1;
      continue;
    }
    count.operations[call.operation] = (count.operations[call.operation] ?? 0) + 1;
    if (hash) {
      let step = besideSteps.get(hash);
      if (step === undefined) {
        step = count.steps.push([]) - 1;
        count.sentSteps.push([]);
        besideSteps.set(hash, step);
      }
      count.steps[step]!.push(call.operation + BESIDE_HASH);
      count.sentSteps[step]!.push(call.sent_);
      continue;
    }
    if (inFlight === 0) {
      count.waits += 1;
      current = count.steps.push([]) - 1;
      count.sentSteps.push([]);
    }
    inFlight += 1;
    count.steps[current]!.push(call.operation);
    count.sentSteps[current]!.push(call.sent_);
  }
  return count;
}

/** `dynamodb.GetItem ‖ dynamodb.UpdateItem → s3.PutObject`: the waits in order, calls sent together joined. */
export function describeSteps(steps: string[][]): string {
  return steps.map((step) => step.join(' ‖ ')).join(' → ');
}
