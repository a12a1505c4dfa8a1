// Business and request metrics (docs/DESIGN.md 14, docs/OBSERVABILITY.md) in CloudWatch's Embedded Metric
// Format, built by Powertools for AWS Lambda's Metrics. Points recorded while a request or invocation is
// served (lib/platform/observability/invocation.ts) are kept in its AsyncLocalStorage scope and written once, when it
// ends: one EMF document per set of dimensions (EMF applies a document's dimensions to all its values).
// A point recorded outside any scope is written at once. An HTTP request's points ride in its access line
// instead (`writeRequestLine`): one line per request, under its route, their own dimensions as the line's
// fields.
//
// Every point with dimensions is also published under `service` alone, so an alarm or a dashboard can read
// a total without knowing every route, provider or reason.
import { AsyncLocalStorage } from 'node:async_hooks';
import { getStringFromEnv, isRunningInLambda } from '@aws-lambda-powertools/commons/utils/env';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { isLogged, log, type RequestLine } from '#lib/platform/log.ts';

export type MetricUnit = 'Count' | 'Bytes' | 'Milliseconds';

export interface MetricOptions {
  value?: number;
  unit?: MetricUnit;
  /** Low-cardinality dimensions only (route, provider, reason): never an id, an address or a secret. */
  dimensions?: Record<string, string>;
}

/** The namespace when the stack sets none (POWERTOOLS_METRICS_NAMESPACE): local runs and tests. */
export const DEFAULT_NAMESPACE = 'AccountUploadPayment';

interface Point {
  name: string;
  unit: MetricUnit;
  value: number;
  dimensions: Record<string, string>;
}

interface Scope {
  points: Point[];
  open: boolean;
  /** The request's access line, written with the points when the scope ends. */
  line?: { message: string; fields: Record<string, unknown> & { route: string } };
}

const scopes = new AsyncLocalStorage<Scope>();

export type MetricSink = (document: string) => void;

let sink: MetricSink | undefined;

/**
 * Where EMF documents go besides the function's standard output (which CloudWatch Logs reads). By default
 * they are printed only in AWS Lambda: `npm start` and the tests keep them off the console (they show as
 * `metrics` lines at log level debug). `sink` also receives every document (tests parse them); `null`
 * removes it.
 */
export function configureMetrics(options: { sink: MetricSink | null }): void {
  sink = options.sink ?? undefined;
}

/** Powertools' Metrics as the EMF serializer (namespace, units, validation); we decide where it goes. */
class EmfDocuments extends Metrics {
  get off(): boolean {
    return this.isDisabled();
  }
}

let documents: EmfDocuments | undefined;

function emf(): EmfDocuments {
  documents ??= new EmfDocuments({
    namespace: getStringFromEnv({ key: 'POWERTOOLS_METRICS_NAMESPACE', defaultValue: DEFAULT_NAMESPACE }),
    // Powertools' own warnings (a dimension dropped, ...) as our log lines.
    logger: {
      debug: (...args: unknown[]) => log.debug(String(args[0])),
      info: (...args: unknown[]) => log.info(String(args[0])),
      warn: (...args: unknown[]) => log.warn(String(args[0])),
      error: (...args: unknown[]) => log.error(String(args[0])),
    },
  });
  return documents;
}

// Powertools flushes on its own past 100 metric names or 100 values of one; a document stays below both.
const MAX_POINTS_PER_DOCUMENT = 90;

let lambda: boolean | undefined;

/**
 * In AWS Lambda: the runtime's initialization type (what Powertools goes by), or its execution environment
 * (also set by the deployed-shape test's host), so a missing variable never silences every metric. Read
 * once: a container's environment does not change, and Powertools reads several variables each time
 * (about a tenth of a request's own CPU on a small route).
 */
function inLambda(): boolean {
  lambda ??=
    isRunningInLambda() ||
    getStringFromEnv({ key: 'AWS_EXECUTION_ENV', defaultValue: '' }).startsWith('AWS_Lambda_');
  return lambda;
}

function write(document: string): void {
  sink?.(document);
  if (inLambda()) process.stdout.write(`${document}\n`);
  else if (isLogged('debug')) log.debug('metrics', { emf: JSON.parse(document) as unknown });
}

/** Writes the points, one EMF document per dimension set. Synchronous: no other request interleaves. */
function publish(points: readonly Point[]): void {
  if (points.length === 0) return;
  const metrics = emf();
  if (metrics.off) return;
  const bySet = new Map<string, Point[]>();
  for (const point of points) {
    const key = JSON.stringify(Object.entries(point.dimensions).sort(([a], [b]) => a.localeCompare(b)));
    const group = bySet.get(key) ?? [];
    group.push(point);
    bySet.set(key, group);
  }
  for (const group of bySet.values()) {
    for (let start = 0; start < group.length; start += MAX_POINTS_PER_DOCUMENT) {
      const slice = group.slice(start, start + MAX_POINTS_PER_DOCUMENT);
      const dimensions = slice[0]!.dimensions;
      try {
        for (const [name, value] of Object.entries(dimensions)) metrics.addDimension(name, value);
        // The same values under `service` alone: the totals.
        if (Object.keys(dimensions).length > 0) metrics.addDimensions({});
        for (const point of slice) metrics.addMetric(point.name, point.unit, point.value);
        write(JSON.stringify(metrics.serializeMetrics()));
      } catch (error) {
        // A metric must never fail a request: a bad name or value is a bug worth a line, not a 500.
        log.warn('metrics not written', { error, names: slice.map((point) => point.name) });
      } finally {
        clear(metrics);
      }
    }
  }
}

function clear(metrics: EmfDocuments): void {
  metrics.clearMetrics();
  metrics.clearDimensions();
  metrics.clearMetadata();
}

/**
 * The access line of the HTTP request being served: written once it has been served, as its one line at INFO
 * and its EMF document, its points published under its `route` (and `service` alone) and their own
 * dimensions written as the line's fields. Outside a scope it is written at once.
 */
export function writeRequestLine(message: string, fields: Record<string, unknown> & { route: string }): void {
  const scope = scopes.getStore();
  if (scope?.open) scope.line = { message, fields };
  else log.request(message, fields, { droppable: LESS_NEEDED });
}

/**
 * What a request line loses, in this order, when it would pass MAX_REQUEST_LINE_BYTES: first what it says
 * twice (its route template names the method; its document has `Latency`, `ColdStart`, `_aws.Timestamp`),
 * then the trace and the role, then its points' own dimensions; never its metrics.
 */
const LESS_NEEDED = ['xray_trace_id', 'role'];
const SAID_AGAIN = ['method', 'duration_ms', 'cold_start', 'time', ...LESS_NEEDED];

/**
 * The points' own dimensions the line does not carry yet, as its fields, and the points whose values
 * disagree with the line's or another point's (written apart).
 */
function asFields(points: readonly Point[], line: Record<string, unknown>) {
  const fields: Record<string, string> = {};
  const apart: Point[] = [];
  for (const point of points) {
    const own = Object.entries(point.dimensions);
    if (own.some(([name, value]) => (line[name] ?? fields[name] ?? value) !== value)) apart.push(point);
    else for (const [name, value] of own) if (!(name in line)) fields[name] = value;
  }
  return { fields, apart };
}

/** The request's line with its points in it (where INFO is not written, the points alone). */
function publishLine(points: readonly Point[], { message, fields }: NonNullable<Scope['line']>): void {
  const metrics = emf();
  if (metrics.off || !isLogged('info')) {
    // Each of these writes nothing where the other is what is off.
    publish(points);
    log.request(message, fields, { droppable: LESS_NEEDED });
    return;
  }
  const { fields: own, apart } = asFields(points, fields);
  const joined = points.filter((point) => !apart.includes(point));
  const line: RequestLine = { droppable: [...SAID_AGAIN, ...Object.keys(own)] };
  try {
    metrics.addDimensions({ route: fields.route });
    metrics.addDimensions({});
    for (const point of joined) metrics.addMetric(point.name, point.unit, point.value);
    if (joined.length > 0) line.document = metrics.serializeMetrics() as unknown as Record<string, unknown>;
  } catch (error) {
    log.warn('metrics not written', { error, names: joined.map((point) => point.name) });
  } finally {
    clear(metrics);
  }
  const document = line.document && JSON.stringify({ ...line.document, ...own });
  // In AWS Lambda the line is the document CloudWatch reads; elsewhere they stay apart (documents at debug).
  if (inLambda()) {
    log.request(message, { ...fields, ...own }, line);
    if (document) sink?.(document);
  } else {
    log.request(message, fields, { droppable: LESS_NEEDED });
    if (document) write(document);
  }
  publish(apart);
}

/** Records one data point of `name` (default: a count of 1) for the request or invocation being served. */
export function recordMetric(name: string, options: MetricOptions = {}): void {
  const point: Point = {
    name,
    unit: options.unit ?? 'Count',
    value: options.value ?? 1,
    dimensions: { ...options.dimensions },
  };
  const scope = scopes.getStore();
  if (scope?.open) scope.points.push(point);
  else publish([point]);
}

/**
 * Runs `work` collecting the points recorded inside it, and writes them once it settles (returned or
 * thrown). Points recorded by work it left running are written at once.
 */
export async function collectMetrics<T>(work: () => Promise<T>): Promise<T> {
  const scope: Scope = { points: [], open: true };
  try {
    return await scopes.run(scope, work);
  } finally {
    scope.open = false;
    if (scope.line) publishLine(scope.points, scope.line);
    else publish(scope.points);
  }
}
