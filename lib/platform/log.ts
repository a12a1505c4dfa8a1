// Structured JSON logging: one line per event, tagged with the request being served (docs/OBSERVABILITY.md).
// Powertools for AWS Lambda's Logger is the engine (levels, AWS Lambda's log-level controls, the X-Ray trace
// id, the service name, JSON that survives errors, BigInts and cycles); the line's shape, the redaction of
// secret-looking fields and where lines go (a sink, plus a tap that sees every line) are ours.
//
// Per-request fields (API and Lambda request ids, cold start) ride in an AsyncLocalStorage scope rather
// than in the Logger instance: the local server and the tests serve concurrent requests in one process,
// where instance-wide keys would cross from one request's lines into another's.
import { AsyncLocalStorage } from 'node:async_hooks';
import { isRequestXRaySampled } from '@aws-lambda-powertools/commons/utils/env';
import { LogFormatter, Logger, LogItem, LogLevelThreshold } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const THRESHOLD: Record<LogLevel, number> = {
  debug: LogLevelThreshold.DEBUG,
  info: LogLevelThreshold.INFO,
  warn: LogLevelThreshold.WARN,
  error: LogLevelThreshold.ERROR,
  silent: LogLevelThreshold.SILENT,
};

export interface LogContext {
  /** The id a caller can quote: API Gateway's request id (also the `x-request-id` answered). */
  requestId?: string;
  /** The function group or worker serving it. */
  function?: string;
  /** Lambda's own request id of the invocation (`context.awsRequestId`). */
  functionRequestId?: string;
  /** Whether this invocation is the first of its container. */
  coldStart?: boolean;
}

const requestScope = new AsyncLocalStorage<LogContext>();

export type LogSink = (line: string) => void;

let threshold: LogLevel = 'info';
let sink: LogSink = (line) => process.stdout.write(`${line}\n`);
let tap: LogSink | undefined;

// Powertools' default service name when POWERTOOLS_SERVICE_NAME is not set: not worth a field on every line.
const UNNAMED_SERVICE = 'service_undefined';

/** The key under which a line's scope and fields travel to the formatter, past Powertools' key checks. */
const BODY = 'service_line';

interface LineBody {
  scope: Record<string, unknown>;
  fields: Record<string, unknown>;
  /** A request's one line: these fields are dropped, in order, while it is over MAX_REQUEST_LINE_BYTES. */
  droppable?: readonly string[];
}

/** The most a request's one line takes at INFO (docs/OBSERVABILITY.md "The access line"). */
export const MAX_REQUEST_LINE_BYTES = 600;

/**
 * The service's line shape: `level` (lower case), `time`, `message`, then the scope's ids, then the fields.
 * Existing readers (tests, `npm start`'s mail outbox, log queries) depend on it.
 */
class ServiceLineFormatter extends LogFormatter {
  formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const {
      scope,
      fields,
      droppable = [],
    } = (additional[BODY] ?? { scope: {}, fields: {} }) as unknown as LineBody;
    const service =
      attributes.serviceName && attributes.serviceName !== UNNAMED_SERVICE
        ? attributes.serviceName
        : undefined;
    // `function` says nothing where the function's name is its service (every function in AWS).
    const { function: name, ...ids } = scope;
    const line: Record<string, unknown> = {
      level: attributes.logLevel.toLowerCase(),
      time: attributes.timestamp.toISOString(),
      message: attributes.message,
      ...(service ? { service } : {}),
      ...(name === undefined || name === service ? {} : { function: name }),
      ...ids,
      // A trace id leads somewhere only when the request was sampled.
      ...(attributes.xRayTraceId && isRequestXRaySampled() ? { xray_trace_id: attributes.xRayTraceId } : {}),
      ...fields,
    };
    for (const key of droppable) {
      // The line and its newline.
      if (Buffer.byteLength(JSON.stringify(line)) < MAX_REQUEST_LINE_BYTES) break;
      delete line[key];
    }
    return new LogItem({ attributes: line });
  }
}

/** Powertools' Logger writing to our sink and tap instead of its own console. */
class ServiceLogger extends Logger {
  protected override printLog(logLevel: number, item: LogItem): void {
    const text = JSON.stringify(item.getAttributes(), this.getJsonReplacer());
    tap?.(text);
    // With a tap installed the Logger lets every level through (below); the level set still decides what shows.
    if (!tap || logLevel >= THRESHOLD[threshold]) sink(text);
  }
}

const logger = new ServiceLogger({ logFormatter: new ServiceLineFormatter(), logLevel: 'INFO' });

/** The Logger's own level: the one configured, or everything while a tap must see every line. */
function applyLevel(): void {
  const level = tap ? 'debug' : threshold;
  logger.setLogLevel(level.toUpperCase() as Uppercase<LogLevel>);
}

export function configureLogging(options: { level?: LogLevel; sink?: LogSink }): void {
  if (options.level) threshold = options.level;
  if (options.sink) sink = options.sink;
  applyLevel();
}

/**
 * Also hands every line, at every level and whatever the level and sink set by `configureLogging`, to
 * `next` (the test suite's secret scan reads every line this way). One tap at a time; returns the one it
 * replaces, so a caller can chain to it and put it back. `undefined` removes the tap.
 */
export function tapLogging(next: LogSink | undefined): LogSink | undefined {
  const previous = tap;
  tap = next;
  applyLevel();
  return previous;
}

/** Runs `work` with every log line inside it carrying these context fields. */
export function withLogContext<T>(context: LogContext, work: () => T): T {
  return requestScope.run({ ...requestScope.getStore(), ...context }, work);
}

/** The context of the request or invocation being served, if any. */
export function currentLogContext(): Readonly<LogContext> | undefined {
  return requestScope.getStore();
}

// Field names whose values are never written, wherever they appear (defence in depth: callers should
// not pass secrets at all).
const SECRET_FIELD =
  /pass(word)?|secret|token|authorization|cookie|private_?key|api_?v3_?key|^key$|sign(ature)?$/i;

function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_FIELD.test(key) ? '[redacted]' : redact(item, depth + 1);
  }
  return out;
}

function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    return {
      name: error.name,
      message: error.message,
      stack: error.stack,
      ...(error.cause ? { cause: describeError(error.cause) } : {}),
    };
  }
  return { value: String(error) };
}

/** The scope's fields, in the order a reader looks for them. */
function scopeFields(): Record<string, unknown> {
  const context = requestScope.getStore();
  if (!context) return {};
  return {
    ...(context.function ? { function: context.function } : {}),
    ...(context.requestId ? { request_id: context.requestId } : {}),
    // Lambda's id only where there is no request id of the caller's to find the lines by (the workers).
    ...(context.functionRequestId && !context.requestId
      ? { function_request_id: context.functionRequestId }
      : {}),
    ...(context.coldStart ? { cold_start: true } : {}),
  };
}

type Level = Exclude<LogLevel, 'silent'>;

/** Whether a line at `level` would be written anywhere (the sink or the tap): spares building costly fields. */
export function isLogged(level: Level): boolean {
  return tap !== undefined || THRESHOLD[level] >= THRESHOLD[threshold];
}

function write(
  level: Level,
  message: string,
  fields: Record<string, unknown> | undefined,
  clean: boolean,
  request?: RequestLine,
) {
  if (!isLogged(level)) return;
  const { error, ...rest } = fields ?? {};
  const body: LineBody = {
    scope: scopeFields(),
    fields: {
      ...(clean ? (redact(rest) as Record<string, unknown>) : rest),
      ...(error === undefined ? {} : { error: describeError(error) }),
      ...request?.document,
    },
    ...(request ? { droppable: request.droppable } : {}),
  };
  logger[level](message, { [BODY]: body as unknown as LogAttributes[string] });
}

/** What makes a line a request's one line (lib/platform/observability/metrics.ts writes it). */
export interface RequestLine {
  /** Its EMF document, written as is (never redacted: metric names are not secrets). */
  document?: Record<string, unknown>;
  /** The fields it can lose to stay within MAX_REQUEST_LINE_BYTES, the least needed first. */
  droppable: readonly string[];
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write('debug', message, fields, true),
  info: (message: string, fields?: Record<string, unknown>) => write('info', message, fields, true),
  warn: (message: string, fields?: Record<string, unknown>) => write('warn', message, fields, true),
  error: (message: string, fields?: Record<string, unknown>) => write('error', message, fields, true),
  /** A request's one line at INFO, within MAX_REQUEST_LINE_BYTES (docs/OBSERVABILITY.md "The access line"). */
  request: (message: string, fields: Record<string, unknown>, line: RequestLine) =>
    write('info', message, fields, true, line),
  /**
   * Writes a line without redaction: only for the no-mail fallback, which docs/SPEC.md 4.1 rule 9 asks to
   * carry the verification code.
   */
  unredacted: (message: string, fields: Record<string, unknown>) => write('info', message, fields, false),
};
