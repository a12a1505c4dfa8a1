// One-click actions on a page (no form to hold input): the call, what it leaves on the page, and the button.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { copyText, errorText, FormError, Status } from './ui.tsx';

export interface Action {
  run: (work: () => Promise<unknown>, done?: string) => Promise<void>;
  error: string;
  /** Copies `text` to the clipboard, saying so where the actions' messages go: `what` is "Link" or "Token". */
  copy: (text: string, what: string) => Promise<void>;
  view: ComponentChildren;
}

/**
 * Runs a page's actions one message at a time: the last action's outcome replaces the one before, and
 * `after` (a reload, say) runs only when the action went through, so a failure leaves the page as it was.
 */
export function useAction(after: () => Promise<unknown> | unknown): Action {
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const run = async (work: () => Promise<unknown>, done = '') => {
    setError('');
    setMessage('');
    try {
      await work();
      await after();
      setMessage(done);
    } catch (caught) {
      setError(errorText(caught));
    }
  };
  const view = (
    <>
      {message && <Status message={message} />}
      {error && <FormError message={error} />}
    </>
  );
  const copy = async (text: string, what: string) =>
    setMessage((await copyText(text)) ? `${what} copied` : `Select the ${what.toLowerCase()} and copy it`);
  return { run, error, copy, view };
}

/** A row's button whose click runs `work` as the page's action; `children` name the row for screen readers. */
export function ActionButton({
  action,
  work,
  done,
  primary = false,
  children,
}: {
  action: Action;
  work: () => Promise<unknown>;
  done?: string;
  primary?: boolean;
  children: ComponentChildren;
}) {
  return (
    <button type="button" class={primary ? undefined : 'secondary'} onClick={() => action.run(work, done)}>
      {children}
    </button>
  );
}
