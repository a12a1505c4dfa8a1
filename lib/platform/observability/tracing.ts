// AWS X-Ray tracing with Powertools for AWS Lambda's Tracer (docs/OBSERVABILITY.md), on per stage: the stack
// sets POWERTOOLS_TRACE_ENABLED=true where tracing is on (and gives the function active tracing). The Tracer
// brings the X-Ray SDK, the largest of the Powertools imports (docs/OBSERVABILITY.md has the figures), so it
// is imported only when tracing is on: a stage without tracing never loads it.
//
// Each invocation gets a `## <function>` subsegment (as Powertools' captureLambdaHandler makes), annotated
// with the cold start and the service; HTTP requests add their route and status, and a 5xx answer marks it
// as a fault, since the middy chain turns errors into answers and the invocation itself never fails.
import { getBooleanFromEnv } from '@aws-lambda-powertools/commons/utils/env';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { log } from '#lib/platform/log.ts';

let tracer: Tracer | undefined;
let loading: Promise<Tracer | undefined> | undefined;
/** Clients built before the Tracer was loaded: captured as soon as it is. */
const waiting: object[] = [];

/** Whether this function traces: POWERTOOLS_TRACE_ENABLED, off unless the stack turns it on. */
export function tracingEnabled(): boolean {
  // Asked on every invocation and client: kept while the variable is unchanged (Powertools' parsing of it
  // costs more than the read).
  const raw = process.env.POWERTOOLS_TRACE_ENABLED;
  if (raw !== tracingFor) {
    tracingFor = raw;
    tracingAnswer = getBooleanFromEnv({
      key: 'POWERTOOLS_TRACE_ENABLED',
      defaultValue: false,
      extendedParsing: true,
    });
  }
  return tracingAnswer;
}
let tracingFor: string | undefined | null = null;
let tracingAnswer = false;

/** Loads the Tracer when tracing is on (once per container); resolves to it, or undefined when off. */
export function loadTracer(): Promise<Tracer | undefined> {
  if (!tracingEnabled()) return Promise.resolve(undefined);
  loading ??= import('@aws-lambda-powertools/tracer').then(
    ({ Tracer }) => {
      // Powertools' Tracer also stays off outside Lambda (npm start, tests) whatever the variable says.
      const loaded = new Tracer();
      tracer = loaded;
      for (const client of waiting.splice(0)) loaded.captureAWSv3Client(client);
      return loaded;
    },
    (error: unknown) => {
      // A function without its traces still serves: the failure is a line, not an outage.
      log.warn('tracing unavailable', { error });
      return undefined;
    },
  );
  return loading;
}

// With tracing on, the import starts with the function's own (Lambda's init phase), not at its first request.
if (tracingEnabled()) void loadTracer();

/** The loaded Tracer, if tracing is on and it has loaded. */
export function activeTracer(): Tracer | undefined {
  return tracer?.isTracingEnabled() ? tracer : undefined;
}

/**
 * Records the calls of an AWS SDK v3 client as X-Ray subsegments when tracing is on (lib/platform/aws builds every
 * client through this). Without tracing the client is returned untouched and nothing is loaded.
 */
export function captureClient<Client extends object>(client: Client): Client {
  if (!tracingEnabled()) return client;
  if (tracer) return tracer.captureAWSv3Client(client);
  waiting.push(client);
  void loadTracer();
  return client;
}

/**
 * Runs `work` in a `## <name>` subsegment when tracing is active; otherwise just runs it. The cold start
 * annotated is the invocation's own (the same the log lines carry).
 */
export async function traced<T>(name: string, coldStart: boolean, work: () => Promise<T>): Promise<T> {
  const active = activeTracer();
  const parent = active?.getSegment();
  if (!active || !parent) return work();
  const subsegment = parent.addNewSubsegment(`## ${name}`);
  active.setSegment(subsegment);
  active.putAnnotation('ColdStart', coldStart);
  active.addServiceNameAnnotation();
  try {
    return await work();
  } catch (error) {
    active.addErrorAsMetadata(error as Error);
    throw error;
  } finally {
    try {
      subsegment.close();
    } catch {
      // A segment that cannot be closed loses its trace, never the answer.
    }
    active.setSegment(parent);
  }
}

/** Annotates the current subsegment with a request's route and status; a 5xx marks it as a fault. */
export function annotateRequest(route: string, status: number): void {
  const active = activeTracer();
  if (!active) return;
  active.putAnnotation('route', route);
  active.putAnnotation('status', status);
  if (status >= 500) active.getSegment()?.addFaultFlag();
}
