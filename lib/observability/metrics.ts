// Business and request metrics (docs/DESIGN.md 14). The interface every module calls; the Powertools EMF
// implementation behind it is being written in this round (placeholder body until then).
export type MetricUnit = 'Count' | 'Bytes' | 'Milliseconds';

export interface MetricOptions {
  value?: number;
  unit?: MetricUnit;
  /** Low-cardinality dimensions only (route, provider, reason): never an id, an address or a secret. */
  dimensions?: Record<string, string>;
}

/** Records one data point of `name` (default: a count of 1) for the request or invocation being served. */
export function recordMetric(_name: string, _options: MetricOptions = {}): void {}
