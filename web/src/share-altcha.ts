// The share page's password form, where proof of work is required (lib/http/share-page.ts): solves a
// challenge in the page's widget, puts the payload in the form's `altcha` field, then sends the form.
import { altchaWidget, solve } from './altcha.ts';

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-altcha]')) {
  const widget = altchaWidget();
  form.querySelector('altcha-widget')?.replaceWith(widget);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const answer = await fetch('/api/v1/challenge');
    const { data } = (await answer.json()) as { data: object };
    (form.elements.namedItem('altcha') as HTMLInputElement).value = await solve(widget, data);
    form.submit();
  });
}
