// The share form: a file's or an album's share link, with an optional password, expiry and view limit, then
// the link to copy (the lightbox and an album's page show it; docs/DESIGN.md 16).
import { useId, useState } from 'preact/hooks';
import { useAction } from './action.tsx';
import { api, call, type DataOf } from './api/client.ts';

type Share = DataOf<'/api/v1/shares', 'post', 201>;

/** A share's options, then its link to copy; `target` says what is shared. */
export function ShareForm({
  target,
  label,
  level = 2,
}: {
  target: { album_id: string } | { file_id: string };
  label: string;
  /** The heading's level where the form sits (a card's is under its file's h3). */
  level?: 2 | 4;
}) {
  const Heading = level === 2 ? 'h2' : 'h4';
  const id = useId();
  const [password, setPassword] = useState('');
  const [expires, setExpires] = useState('');
  const [maxViews, setMaxViews] = useState('');
  const [created, setCreated] = useState<Share | null>(null);
  const [busy, setBusy] = useState(false);
  const action = useAction(() => undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    await action.run(async () => {
      const share = await call(
        api.POST('/api/v1/shares', {
          body: {
            ...target,
            ...(password ? { password } : {}),
            ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
            ...(maxViews ? { max_views: Number(maxViews) } : {}),
          },
        }),
      );
      setCreated(share);
      setPassword('');
    }, 'Share link created');
    setBusy(false);
  };

  return (
    <section class="share-form" aria-labelledby={`${id}-title`}>
      <Heading id={`${id}-title`}>{label}</Heading>
      <form onSubmit={submit} noValidate>
        <div class="field">
          <label for={`${id}-password`}>Password (optional)</label>
          <input
            id={`${id}-password`}
            type="password"
            autoComplete="new-password"
            maxLength={128}
            value={password}
            onInput={(event) => setPassword((event.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for={`${id}-expires`}>Expires (optional)</label>
          <input
            id={`${id}-expires`}
            type="datetime-local"
            value={expires}
            onInput={(event) => setExpires((event.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for={`${id}-views`}>View limit (optional)</label>
          <input
            id={`${id}-views`}
            type="number"
            min={1}
            inputMode="numeric"
            value={maxViews}
            onInput={(event) => setMaxViews((event.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Create share link
        </button>
      </form>
      {action.view}
      {created && <ShareLink share={created} />}
    </section>
  );
}

/** A share's link, selectable, with a copy button. */
function ShareLink({ share }: { share: Share }) {
  const action = useAction(() => undefined);
  return (
    <div class="field">
      <label for={`share-link-${share.id}`}>Share link</label>
      <input
        id={`share-link-${share.id}`}
        class="link-text"
        readOnly
        value={share.url}
        onFocus={(event) => (event.target as HTMLInputElement).select()}
      />
      <button type="button" onClick={() => action.copy(share.url, 'Link')}>
        Copy link
      </button>
      {action.view}
    </div>
  );
}
