// The operator's site (GET /api/v1/site, docs/DEPLOYMENT.md "Branding"): loaded once at start and after an
// administrator saves it, applied to the document (title, accent colour, icon) and read by the shell, the
// uploader configurations and the payment choices.
import { useEffect, useState } from 'preact/hooks';
import { api, call, type DataOf } from './api/client.ts';

export type Site = DataOf<'/api/v1/site', 'get'>;

let current: Site | undefined;
const listeners = new Set<() => void>();
const icon = () => document.querySelector<HTMLLinkElement>('link[rel="icon"]');
/** The console's own icon (web/public/favicon.svg), where the site sets none. */
const DEFAULT_ICON = icon()?.getAttribute('href') ?? '/console/favicon.svg';

let pageTitle = '';
/** The tab's title: the page's, then the site's name. */
export function setPageTitle(title: string): void {
  pageTitle = title;
  const name = current?.name ?? 'Console';
  document.title = title ? `${title} · ${name}` : name;
}

export function setSite(site: Site): void {
  current = site;
  setPageTitle(pageTitle);
  document.documentElement.style.setProperty('--accent', site.accent_color);
  icon()?.setAttribute('href', site.favicon ?? DEFAULT_ICON);
  for (const listener of listeners) listener();
}

/** Loads the site; the console keeps its own name and colours when it cannot. */
export const loadSite = () => call(api.GET('/api/v1/site')).then(setSite, () => undefined);

/** A payment channel by the name the site gives it (`channel_labels`); any other provider by its own. */
export function channelName(provider: string, site: Site | undefined): string | undefined {
  return (site?.channel_labels as Record<string, string> | undefined)?.[provider];
}

export function useSite(): Site | undefined {
  const [, setVersion] = useState(0);
  useEffect(() => {
    const listener = () => setVersion((version) => version + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return current;
}
