// ALTCHA's widget (docs/ACCOUNTS.md "Proof of work"), the build without inline workers or styles so the
// console's and the share page's policies need no exception: its SHA worker and style sheet are files of
// this build, on this origin.
import 'altcha/external';
import styleSheet from 'altcha/altcha.css?url';
import type { AltchaWidgetElement } from 'altcha/types/generic';
import ShaWorker from 'altcha/workers/sha?worker';

globalThis.$altcha.algorithms.set('SHA-256', () => new ShaWorker());

/** A widget element, its style sheet linked once: it shows the check running, then done. */
export function altchaWidget(): AltchaWidgetElement {
  if (!document.querySelector(`link[href="${styleSheet}"]`)) {
    document.head.append(
      Object.assign(document.createElement('link'), { rel: 'stylesheet', href: styleSheet }),
    );
  }
  // Its own hidden field is not the one sent: the caller puts the payload in `altcha`.
  return Object.assign(document.createElement('altcha-widget'), { name: 'altcha_widget' });
}

/** Solves `challenge` (GET /api/v1/challenge's data) on the widget: the payload for the `altcha` field. */
export async function solve(widget: AltchaWidgetElement, challenge: object): Promise<string> {
  await widget.configure({ challenge: challenge as never, hideFooter: true });
  const result = await widget.verify();
  if (!result) throw new Error('The check in the browser did not finish; try again.');
  return result.payload;
}
