// Shared pieces: a form whose fields show the API's words next to them, a status line, and helpers.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api/client.ts';

export type Values = Record<string, string>;

export interface FormState<V extends Values> {
  values: V;
  errors: Record<string, string>;
  formError: string;
  busy: boolean;
  set: (name: keyof V & string, value: string) => void;
  submit: (work: (values: V) => Promise<void>) => (event?: Event) => Promise<void>;
  fail: (error: unknown) => void;
  reset: (values?: Partial<V>) => void;
}

/**
 * Form state that outlives a failed request: on an API error the fields it names get its words, the rest
 * goes to the form's alert. Nothing typed is dropped, so an expired session costs only a second submit.
 */
export function useForm<V extends Values>(initial: V): FormState<V> {
  const [values, setValues] = useState<V>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState(false);
  const fail = useCallback(
    (error: unknown) => {
      if (!(error instanceof ApiError)) {
        setFormError(error instanceof Error ? error.message : String(error));
        return;
      }
      const names = Object.keys(values);
      const fieldErrors: Record<string, string> = {};
      for (const [field, message] of Object.entries(error.fields)) {
        if (names.includes(field)) fieldErrors[field] = message;
      }
      // A message that starts with a field's name ("code: is wrong") or names one field belongs next to it.
      const named = /^(\w+):\s*(.*)$/.exec(error.message);
      if (Object.keys(fieldErrors).length === 0 && named && names.includes(named[1]!)) {
        fieldErrors[named[1]!] = named[2]!;
      } else if (Object.keys(fieldErrors).length === 0 && error.status === 409) {
        const mentioned = names.filter((name) =>
          error.message.toLowerCase().includes(name === 'email' ? 'mail' : name.replace('_', ' ')),
        );
        if (mentioned.length === 1) fieldErrors[mentioned[0]!] = error.message;
      }
      setErrors(fieldErrors);
      const unplaced = Object.keys(fieldErrors).length === 0 || error.status === 429 || error.status === 401;
      setFormError(unplaced ? error.describe() : '');
    },
    [values],
  );
  return {
    values,
    errors,
    formError,
    busy,
    fail,
    set: (name, value) => {
      setValues((current) => ({ ...current, [name]: value }));
      if (errors[name]) setErrors((current) => ({ ...current, [name]: '' }));
    },
    reset: (next = {}) => {
      setValues({ ...initial, ...next });
      setErrors({});
      setFormError('');
    },
    submit: (work) => async (event) => {
      event?.preventDefault();
      if (busy) return;
      setBusy(true);
      setErrors({});
      setFormError('');
      try {
        await work(values);
      } catch (error) {
        fail(error);
      } finally {
        setBusy(false);
      }
    },
  };
}

interface FieldProps<V extends Values> {
  form: FormState<V>;
  type?: 'text' | 'email' | 'password' | 'search' | 'url';
  autoComplete?: string;
  inputMode?: 'numeric' | 'decimal' | 'text';
  required?: boolean;
  autoFocus?: boolean;
  maxLength?: number;
  name: keyof V & string;
  label: string;
  hint?: string;
}

export function Field<V extends Values>({ form, name, label, hint, type = 'text', ...input }: FieldProps<V>) {
  const id = useId();
  const error = form.errors[name];
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        // Preact types each input type apart; these five share every attribute used here.
        type={type as 'text'}
        id={id}
        name={name}
        value={form.values[name]}
        onInput={(event) => form.set(name, (event.target as HTMLInputElement).value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
        {...input}
      />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

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
      setError(caught instanceof ApiError ? caught.describe() : String(caught));
    }
  }, deps);
  useEffect(() => {
    void run();
  }, [run]);
  return { data, error, reload: run, setData };
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
