// Shared pieces: the page frame, a status line and an alert, a table, a grid of cards, loading, and formatters.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api/client.ts';
import { setPageTitle } from './site.ts';

export function FormError({ message }: { message: string }) {
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** A polite live region: what just happened, for sighted and screen-reader users alike. */
export function Status({ message }: { message: string }) {
  return (
    <p class="status" role="status" aria-live="polite">
      {message}
    </p>
  );
}

/**
 * A standing state, not an outcome: `success` (green, something is as it should be), `info` (neutral, a
 * state that is neither: waiting for a payment) or `warning` (amber, a protection is missing or something
 * did not happen, with what to do). Announced politely like a Status.
 */
export function Notice({
  tone,
  children,
}: {
  tone: 'success' | 'info' | 'warning';
  children: ComponentChildren;
}) {
  return (
    <p class={`notice notice-${tone}`} role="status" aria-live="polite">
      {children}
    </p>
  );
}

/**
 * A list as a table: named columns, and an unnamed last column (named for screen readers) when the rows carry
 * action buttons. `children` are the rows. On a phone each row becomes a card of labelled lines (style.css),
 * so its actions stay on screen rather than past a sideways scroll: each cell is given its column's name.
 */
export function DataTable({
  columns,
  actions = false,
  children,
}: {
  columns: string[];
  actions?: boolean;
  children: ComponentChildren;
}) {
  const wrap = useRef<HTMLDivElement>(null);
  // After every render: the rows are the caller's, so their cells learn their column's name here.
  useLayoutEffect(() => {
    for (const row of wrap.current?.querySelectorAll('tbody tr') ?? []) {
      [...row.children].forEach((cell, index) => {
        const label = columns[index] ?? '';
        if ((cell as HTMLElement).dataset.label !== label) (cell as HTMLElement).dataset.label = label;
      });
    }
  });
  return (
    <div class="table-wrap" ref={wrap}>
      <table>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    setPageTitle(title);
    // Focus follows navigation, so a screen reader announces the new page.
    heading.current?.focus();
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </section>
  );
}

/** Loads data for a page; `reload` runs it again. Errors are shown by the caller. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState('');
  const run = useCallback(async () => {
    try {
      setData(await load());
      setError('');
    } catch (caught) {
      setError(errorText(caught));
    }
  }, deps);
  useEffect(() => {
    void run();
  }, [run]);
  return { data, error, reload: run };
}

/**
 * A list loaded a page at a time: the items so far, `more` (absent on the last page) to append the next
 * page, and `refresh` to start again from the first; `version` counts the refreshes.
 */
export function usePages<T>(load: (cursor?: string) => Promise<{ items: T[]; next_cursor: string | null }>) {
  const [version, setVersion] = useState(0);
  const [extra, setExtra] = useState<T[]>([]);
  const first = useLoad(() => load(), [version]);
  const [cursor, setCursor] = useState<string | null>(null);
  useEffect(() => setCursor(first.data?.next_cursor ?? null), [first.data]);
  const more = async (from: string) => {
    const page = await load(from);
    setExtra((list) => [...list, ...page.items]);
    setCursor(page.next_cursor);
  };
  const refresh = () => {
    setExtra([]);
    setVersion((value) => value + 1);
  };
  const items = [...(first.data?.items ?? []), ...extra];
  return { ...first, items, more: cursor ? () => more(cursor) : undefined, refresh, version };
}

/** Where a loaded list stands: still loading, failed, loaded with no items, or loaded with some. */
export type ListPhase = 'loading' | 'failed' | 'empty' | 'ready';

/** The phase of a `useLoad` or `usePages` result holding `count` items once loaded. */
export function listPhase(list: { data?: unknown; error: string }, count: number): ListPhase {
  if (list.error) return 'failed';
  if (list.data === undefined) return 'loading';
  return count === 0 ? 'empty' : 'ready';
}

/**
 * What a list shows instead of its items while it has none to show: grey placeholder lines while it loads
 * (so a slow list is not a blank page; announced once as "Loading…"), and while empty a sentence saying so
 * and, when given, what to do about it. Nothing once there are items, or when the load failed (the page
 * shows the error).
 */
export function ListState({
  phase,
  empty,
  hint,
  rows = 3,
}: {
  phase: ListPhase;
  /** The sentence for an empty list ("No tokens yet."). */
  empty: string;
  /** What to do about it ("Create one above."), when there is something. */
  hint?: ComponentChildren;
  rows?: number;
}) {
  if (phase === 'loading') {
    return (
      <div class="skeleton-list" aria-busy="true">
        <p class="visually-hidden" role="status">
          Loading…
        </p>
        {Array.from({ length: rows }, (_, index) => (
          <div key={index} class="skeleton-line" aria-hidden="true" />
        ))}
      </div>
    );
  }
  if (phase === 'empty') {
    return (
      <div class="empty-state">
        <p>{empty}</p>
        {hint && <p class="hint">{hint}</p>}
      </div>
    );
  }
  return null;
}

/**
 * A loaded list as a table, as the console's pages show their lists: the load's error, placeholder lines
 * while it loads, the empty sentence and its hint once loaded with none, else the table, a row an item.
 */
export function ListTable<T>({
  list,
  items,
  columns,
  actions = false,
  empty,
  hint,
  row,
}: {
  list: { data?: unknown; error: string };
  /** The loaded items (undefined until loaded). */
  items: readonly T[] | undefined;
  columns: string[];
  actions?: boolean;
  empty: string;
  hint?: ComponentChildren;
  /** One `<tr>` of the table. */
  row: (item: T) => ComponentChildren;
}) {
  const phase = listPhase(list, items?.length ?? 0);
  return (
    <>
      {list.error && <FormError message={list.error} />}
      <ListState phase={phase} empty={empty} hint={hint} />
      {phase === 'ready' && items && (
        <DataTable columns={columns} actions={actions}>
          {items.map(row)}
        </DataTable>
      )}
    </>
  );
}

/**
 * Cards in a grid: the load's alert, placeholder cards while the first page loads, a line (and a hint)
 * when there are none, and a button for the next page.
 */
export function CardGrid<T>({
  list,
  label,
  empty,
  hint,
  className,
  children,
}: {
  list: { data?: unknown; error: string; items: T[]; more?: (() => void) | undefined };
  label: string;
  empty: string;
  hint?: ComponentChildren;
  /** A further class of the list (the files grid's `file-grid`: denser tiles, square placeholders). */
  className?: string;
  children: (item: T, index: number) => ComponentChildren;
}) {
  const phase = listPhase(list, list.items.length);
  return (
    <>
      {list.error && <FormError message={list.error} />}
      {phase === 'empty' && <ListState phase={phase} empty={empty} hint={hint} />}
      {phase === 'loading' && (
        <p class="visually-hidden" role="status">
          Loading…
        </p>
      )}
      <ul class={className ? `grid ${className}` : 'grid'} aria-label={label} aria-busy={phase === 'loading'}>
        {phase === 'loading'
          ? Array.from({ length: 6 }, (_, index) => (
              <li key={index} class="card skeleton-card" aria-hidden="true" />
            ))
          : list.items.map(children)}
      </ul>
      {list.more && (
        <button type="button" class="secondary" onClick={list.more}>
          Load more
        </button>
      )}
    </>
  );
}

/** The API's words for a failure, or the failure's own. */
export function errorText(caught: unknown): string {
  return caught instanceof ApiError ? caught.describe() : String(caught);
}

/**
 * A size in bytes. `null` is an account's quota when it has none (an administrator's:
 * docs/UPLOADS.md "Storage quota"), so it reads "unlimited"; a plan's `quota_bytes` null means something
 * else (the plan grants no storage): say that with `planStorage`.
 */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return 'unlimited';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/**
 * What a plan does to its buyer's storage (docs/PAYMENTS-GUIDE.md "Plans that grant storage"): a quota of
 * that size, or, with `quota_bytes` null, nothing: buying it leaves the account's quota as it is.
 */
export function planStorage(quotaBytes: number | null): string {
  return quotaBytes === null
    ? 'no storage change (keeps your current quota)'
    : `${formatBytes(quotaBytes)} quota`;
}

export function formatMoney(cents: number): string {
  return `¥${(cents / 100).toFixed(2)}`;
}

export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
