// The operator's site (docs/DEPLOYMENT.md "Branding"): name, logo, accent colour, icon, footer, terms and
// privacy texts and the payment channels' names, saved whole; the console shows them at once.
import { useState } from 'preact/hooks';
import { api, call } from '../api/client.ts';
import { Field, Submit, useForm } from '../form.tsx';
import { type Site, setSite } from '../site.ts';
import { Page, useLoad } from '../ui.tsx';

export function AdminSite() {
  const site = useLoad(() => call(api.GET('/api/v1/site')));
  return (
    <Page title="Site">
      <p>What visitors and buyers see: on this console, share pages, mails and uploader configurations.</p>
      {site.error && <p role="alert">{site.error}</p>}
      {site.data && <SiteForm current={site.data} />}
    </Page>
  );
}

function SiteForm({ current }: { current: Site }) {
  const [version, setVersion] = useState(current.version);
  const form = useForm({
    name: current.name,
    logo_url: current.logo_url ?? '',
    accent_color: current.accent_color,
    favicon: current.favicon ?? '',
    footer_html: current.footer_html,
    terms: current.terms,
    privacy: current.privacy,
    ...current.channel_labels,
  });
  const [saved, setSaved] = useState('');
  const save = form.submit(async ({ channel_a, channel_b, channel_c, logo_url, favicon, ...fields }) => {
    setSaved('');
    const site = await call(
      api.PUT('/api/v1/admin/site', {
        body: {
          ...fields,
          version,
          logo_url: logo_url.trim() || null,
          favicon: favicon.trim() || null,
          channel_labels: { channel_a, channel_b, channel_c },
        },
      }),
    );
    setVersion(site.version);
    form.set('footer_html', site.footer_html);
    setSite(site);
    setSaved('Saved: the site shows the new branding.');
  });
  const link = 'An https URL or a path on this site, like /i/… of an image you uploaded. Empty: none.';
  return (
    <form onSubmit={save} noValidate>
      <Field form={form} name="name" label="Site name" maxLength={60} />
      <Field form={form} name="logo_url" label="Logo URL" hint={link} />
      <Field form={form} name="accent_color" label="Accent colour" hint="As #rrggbb, like #0b57d0." />
      <Field form={form} name="favicon" label="Icon URL" hint={link} />
      <Field
        form={form}
        name="footer_html"
        label="Footer (HTML)"
        multiline
        hint="Text, paragraphs and links only: anything else is removed when saved."
      />
      <Field form={form} name="terms" label="Terms of service" multiline hint="Plain text; empty: no link." />
      <Field form={form} name="privacy" label="Privacy policy" multiline hint="Plain text; empty: no link." />
      <Field form={form} name="channel_a" label="Name of payment channel A" />
      <Field form={form} name="channel_b" label="Name of payment channel B" />
      <Field form={form} name="channel_c" label="Name of payment channel C" />
      <Submit form={form}>Save</Submit>
      {saved && <p role="status">{saved}</p>}
    </form>
  );
}
