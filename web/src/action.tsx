// One-click actions on a page (no form to hold input): the call, what it leaves on the page, and the button.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { errorText, FormError, Status } from './ui.tsx';

export interface Action {
  run: (work: () => Promise<unknown>, done?: string) => Promise<void>;
  error: string;
  /** Puts a message of the page's own (a copy to the clipboard, say) where the actions' go. */
  say: (message: string) => void;
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
  return { run, error, say: setMessage, view };
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
