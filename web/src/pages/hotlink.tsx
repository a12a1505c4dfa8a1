// Hotlink rules: which sites' pages may show the owner's files (docs/IMAGES.md "Serving rules"). One host
// a line; an empty list lets any site show them. The CDN applies a change within two minutes.
import { useState } from 'preact/hooks';
import { api, call, type DataOf } from '../api/client.ts';
import { Field, Submit, useForm } from '../form.tsx';
import { Page, useLoad } from '../ui.tsx';

type HotlinkRules = DataOf<'/api/v1/hotlink', 'get'>;

export function HotlinkPage() {
  const rules = useLoad(() => call(api.GET('/api/v1/hotlink')));
  return (
    <Page title="Embedding">
      <p>
        Choose which sites may show your images on their pages. Other sites get "403 Forbidden" instead of
        your image; this console is never refused. Changes reach the CDN within two minutes.
      </p>
      {rules.error && <p role="alert">{rules.error}</p>}
      {rules.data && <HotlinkForm current={rules.data} />}
    </Page>
  );
}

/** The form, made once the rules are loaded, so nothing typed is overwritten by their arrival. */
function HotlinkForm({ current }: { current: HotlinkRules }) {
  const form = useForm({
    hosts: (current.hosts ?? []).join('\n'),
    allow_empty: current.allow_empty ? 'true' : '',
  });
  const [saved, setSaved] = useState('');
  const save = form.submit(async ({ hosts, allow_empty }) => {
    setSaved('');
    const list = hosts
      .split(/\s+/)
      .map((host) => host.toLowerCase())
      .filter(Boolean);
    await call(
      api.PUT('/api/v1/hotlink', {
        body: { hosts: list.length > 0 ? list : null, allow_empty: allow_empty === 'true' },
      }),
    );
    setSaved(
      list.length > 0
        ? 'Saved: only these sites may show your files.'
        : 'Saved: any site may show your files.',
    );
  });
  return (
    <form onSubmit={save} noValidate>
      <Field
        form={form}
        name="hosts"
        label="Sites allowed to show your files"
        multiline
        hint="One host a line, like blog.example.com; *.example.com allows its subdomains. Empty: any site."
      />
      <div class="check">
        <input
          id="allow-empty"
          type="checkbox"
          checked={form.values.allow_empty === 'true'}
          onChange={(event) =>
            form.set('allow_empty', (event.target as HTMLInputElement).checked ? 'true' : '')
          }
        />
        <label for="allow-empty">Serve requests that name no site (a link opened directly, most apps)</label>
      </div>
      <Submit form={form}>Save</Submit>
      {saved && <p role="status">{saved}</p>}
    </form>
  );
}
