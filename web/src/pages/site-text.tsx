// The site's terms of service and privacy policy (docs/DEPLOYMENT.md "Branding"): plain text, a paragraph
// for each blank-line-separated block, open to anyone.
import { useSite } from '../site.ts';
import { Page } from '../ui.tsx';

function SiteText({ title, text }: { title: string; text: string | undefined }) {
  return (
    <Page title={title}>
      {text ? (
        text.split(/\n\s*\n/).map((block) => <p class="site-text">{block}</p>)
      ) : (
        <p>Nothing has been published here yet.</p>
      )}
    </Page>
  );
}

export const TermsPage = () => <SiteText title="Terms of service" text={useSite()?.terms} />;
export const PrivacyPage = () => <SiteText title="Privacy policy" text={useSite()?.privacy} />;
