// Forms: state that keeps what was typed through a failed request, fields that show the API's words next to
// them, and the common kinds of field.
import type { ComponentChildren } from 'preact';
import { useCallback, useId, useState } from 'preact/hooks';
import { ApiError } from './api/client.ts';
import { FormError } from './ui.tsx';

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
      // Said once: next to its field ("code: was already used; wait for the next code"), else in the alert.
      const unplaced = Object.keys(fieldErrors).length === 0 || error.status === 429;
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
  type?: 'text' | 'email' | 'password' | 'search' | 'url' | 'datetime-local';
  autoComplete?: string;
  inputMode?: 'numeric' | 'decimal' | 'text';
  required?: boolean;
  autoFocus?: boolean;
  maxLength?: number;
  name: keyof V & string;
  label: string;
  hint?: string;
  /** Several lines (a textarea): for text whose line breaks matter. */
  multiline?: boolean;
}

export function Field<V extends Values>({
  form,
  name,
  label,
  hint,
  type = 'text',
  multiline = false,
  ...input
}: FieldProps<V>) {
  const id = useId();
  const error = form.errors[name];
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const shared = {
    id,
    name,
    value: form.values[name],
    onInput: (event: Event) => form.set(name, (event.target as HTMLInputElement | HTMLTextAreaElement).value),
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': describedBy || undefined,
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {multiline ? (
        // Text that keeps its line breaks (a pasted PEM key): a one-line input would join them.
        <textarea
          {...shared}
          rows={4}
          spellcheck={false}
          autoComplete={input.autoComplete}
          maxLength={input.maxLength}
        />
      ) : (
        // Preact types each input type apart; these share every attribute used here.
        <input type={type as 'text'} {...shared} {...input} />
      )}
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

type PresetFieldProps<V extends Values> = Omit<FieldProps<V>, 'type' | 'name' | 'label'> & {
  name?: keyof V & string;
  label?: string;
};

/** A password field; by default the account's current one, which the browser may fill in. */
export function PasswordField<V extends Values>({
  name = 'password' as keyof V & string,
  label = 'Current password',
  autoComplete = 'current-password',
  ...rest
}: PresetFieldProps<V>) {
  return <Field {...rest} name={name} label={label} type="password" autoComplete={autoComplete} />;
}

/** A new password (by default `new_password`), which the browser may suggest; the API wants 8 characters. */
export function NewPasswordField<V extends Values>({
  name = 'new_password' as keyof V & string,
  label = 'New password',
  ...rest
}: PresetFieldProps<V>) {
  return (
    <PasswordField
      {...rest}
      name={name}
      label={label}
      autoComplete="new-password"
      hint="At least 8 characters."
    />
  );
}

/** A one-time code (from an authenticator app or an e-mail): a phone shows digits, the browser may paste it. */
export function CodeField<V extends Values>({
  name = 'code' as keyof V & string,
  label = 'Code from the app',
  ...rest
}: PresetFieldProps<V>) {
  return <Field {...rest} name={name} label={label} inputMode="numeric" autoComplete="one-time-code" />;
}

/** A form's submit button, idle while the form works, and the form's alert right after it. */
export function Submit<V extends Values>({
  form,
  secondary = false,
  children,
}: {
  form: FormState<V>;
  secondary?: boolean;
  children: ComponentChildren;
}) {
  return (
    <>
      <button type="submit" class={secondary ? 'secondary' : undefined} disabled={form.busy}>
        {children}
      </button>
      {form.formError && <FormError message={form.formError} />}
    </>
  );
}
