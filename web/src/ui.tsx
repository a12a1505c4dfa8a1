// Shared pieces: the page frame, a status line and an alert, a table, loading, and formatters.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api/client.ts';

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
 * A list as a table that scrolls inside its own box on a phone: named columns, and an unnamed last column
 * (named for screen readers) when the rows carry action buttons. `children` are the rows.
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
  return (
    <div class="table-wrap">
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
    document.title = `${title} · Console`;
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
  return { data, error, reload: run, setData };
}

/** The API's words for a failure, or the failure's own. */
export function errorText(caught: unknown): string {
  return caught instanceof ApiError ? caught.describe() : String(caught);
}

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
