// The floor of each main path's critical-path waits (test/support/aws-waits.ts): the fewest times a request
// of that path must wait on AWS, whatever the implementation, while keeping its guarantees. The one place
// they are written in code: test/integration/waits.test.ts fails when a path waits more, and checks that
// docs/PERFORMANCE.md's table says the same numbers; the bench reports `waits_over_floor`.

export interface Floor {
  /** The path's name in the bench and the docs' table. */
  path: string;
  /** What is measured, as the docs' table names it. */
  request: string;
  /** The floor, or null for a path not built yet. */
  floor: number | null;
  /** Why no implementation keeping the path's guarantees can wait less (one line). */
  why: string;
}

export const FLOORS = [
  {
    path: 'login',
    request: '`POST /auth/login` (right password)',
    floor: 2,
    why: 'the per-address limit and the guessing guard are written before the hash runs, the session after it',
  },
  {
    path: 'me',
    request: '`GET /auth/me`',
    floor: 1,
    why: 'the session is read on every request, so a revocation or a disabling takes effect at once',
  },
  {
    path: 'upload',
    request: '`POST /api/v1/upload` (a new file)',
    floor: 2,
    why: 'the caller is known before anything is stored; then the bytes and the record’s conditional transaction go together',
  },
  {
    path: 'presign',
    request: '`POST /api/v1/upload/presign`',
    floor: 3,
    why: 'the caller is known before anything else is read; the declared size is held against the quota, which needs the usage read first (a condition cannot add), then the hold and the pending upload in one transaction; the URL is signed without a call',
  },
  {
    path: 'confirm',
    request: '`POST /api/v1/upload/confirm`',
    floor: 5,
    why: 'the caller is authenticated before anything else is read (an unauthenticated caller causes no reads beyond its credential’s); then the pending upload and the usage together, the incoming bytes, their likeness in the block list (only once the bytes are read, and before anything is recorded), and the stored bytes with the record’s transaction together (the incoming object left to the bucket’s 1-day expiry rule for incoming/)',
  },
  {
    path: 'order',
    request: '`POST /api/v1/orders` (channel order)',
    floor: 2,
    why: 'the caller is known before the order is written; plans and payment settings may be cached per container',
  },
  {
    path: 'callback',
    request: 'a verified channel notification settling a pending order',
    floor: 2,
    why: 'the order is read (its amount and grant decide the settlement), then settled in one transaction; payment settings may be cached',
  },
  {
    path: 'rendition',
    request: '`GET /i/<key>?w=...` (first render)',
    floor: 3,
    why: "the stored copy is looked for alone first, so serving it (every edge miss) costs one read as an original does; then the original, the rendition's claim taken beside it; the rendition is stored before it is answered (the original looked for again beside it), so the next request anywhere finds it",
  },
] as const satisfies readonly Floor[];

export type FlooredPath = Extract<(typeof FLOORS)[number], { floor: number }>['path'];

export function floorOf(path: string): number | null {
  return FLOORS.find((entry) => entry.path === path)?.floor ?? null;
}

/** The floors docs/PERFORMANCE.md's table gives (`| path | request | floor | ...`), by path. */
export function documentedFloors(markdown: string): Map<string, string> {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Waits on the critical path'));
  const floors = new Map<string, string>();
  for (const line of (section ?? '').split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    // | path | request | floor | today | why |
    if (cells.length < 5 || !/^[a-z]+$/.test(cells[1] ?? '')) continue;
    floors.set(cells[1]!, cells[3]!);
  }
  return floors;
}
