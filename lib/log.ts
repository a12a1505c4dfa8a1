// Structured JSON logging: one line per event, tagged with the request id of the request being served.
import { AsyncLocalStorage } from 'node:async_hooks';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

interface LogContext {
  requestId?: string;
  function?: string;
}

const requestScope = new AsyncLocalStorage<LogContext>();

export type LogSink = (line: string) => void;

let threshold: LogLevel = 'info';
let sink: LogSink = (line) => process.stdout.write(`${line}\n`);

export function configureLogging(options: { level?: LogLevel; sink?: LogSink }): void {
  if (options.level) threshold = options.level;
  if (options.sink) sink = options.sink;
}

let tap: LogSink | undefined;

/**
 * Also hands every line, at every level and whatever the level and sink set by `configureLogging`, to
 * `next` (the test suite's secret scan reads every line this way). One tap at a time; returns the one it
 * replaces, so a caller can chain to it and put it back. `undefined` removes the tap.
 */
export function tapLogging(next: LogSink | undefined): LogSink | undefined {
  const previous = tap;
  tap = next;
  return previous;
}

function emit(shown: boolean, line: Record<string, unknown>): void {
  const text = JSON.stringify(line);
  tap?.(text);
  if (shown) sink(text);
}

/** Runs `work` with every log line inside it carrying these context fields. */
export function withLogContext<T>(context: LogContext, work: () => T): T {
  return requestScope.run({ ...requestScope.getStore(), ...context }, work);
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

function write(level: Exclude<LogLevel, 'silent'>, message: string, fields?: Record<string, unknown>): void {
  const shown = RANK[level] >= RANK[threshold];
  if (!shown && !tap) return;
  const context = requestScope.getStore();
  const { error, ...rest } = fields ?? {};
  const line: Record<string, unknown> = {
    level,
    time: new Date().toISOString(),
    message,
    ...(context?.function ? { function: context.function } : {}),
    ...(context?.requestId ? { request_id: context.requestId } : {}),
    ...(redact(rest) as Record<string, unknown>),
    ...(error === undefined ? {} : { error: describeError(error) }),
  };
  emit(shown, line);
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write('debug', message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write('info', message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write('warn', message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write('error', message, fields),
  /**
   * Writes a line without redaction: only for the no-mail fallback, which docs/SPEC.md 4.1 rule 9 asks to
   * carry the verification code.
   */
  unredacted: (message: string, fields: Record<string, unknown>) => {
    const shown = RANK.info >= RANK[threshold];
    if (!shown && !tap) return;
    const context = requestScope.getStore();
    emit(shown, {
      level: 'info',
      time: new Date().toISOString(),
      message,
      ...(context?.requestId ? { request_id: context.requestId } : {}),
      ...fields,
    });
  },
};
