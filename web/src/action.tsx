// One-click actions on a page (no form to hold input): the call, and the status or alert it leaves.
import { useState } from 'preact/hooks';
import { ApiError } from './api/client.ts';
import { FormError, Status } from './ui.tsx';

/**
 * Runs a page's actions one message at a time: the last action's outcome replaces the one before, and
 * `after` (a reload, say) runs only when the action went through, so a failure leaves the page as it was.
 */
export function useAction(after: () => Promise<unknown> | unknown) {
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const run = async (work: () => Promise<unknown>, done: string) => {
    setError('');
    setMessage('');
    try {
      await work();
      setMessage(done);
      await after();
    } catch (caught) {
      setError(caught instanceof ApiError ? caught.describe() : String(caught));
    }
  };
  const view = (
    <>
      {message && <Status message={message} />}
      {error && <FormError message={error} />}
    </>
  );
  return { run, view };
}
