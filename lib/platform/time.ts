// Timestamps as the interface writes them: ISO 8601 with a numeric UTC offset (docs/DESIGN.md 4).

/** `2026-11-21T08:00:00+00:00`: seconds precision, numeric offset rather than `Z`. */
export function isoWithOffset(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`;
}
