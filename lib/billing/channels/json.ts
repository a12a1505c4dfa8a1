// Reading a channel's JSON answers and notifications without trusting their shape.

/** The JSON object `text` holds, or undefined for anything else (invalid JSON, an array, a scalar). */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
