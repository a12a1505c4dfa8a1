// Hash routing (#/files): every page is the one index.html, so neither the local server nor the CDN
// rewrites paths.
import { useEffect, useState } from 'preact/hooks';

export function currentRoute(): string {
  const hash = location.hash.replace(/^#/, '');
  return hash.startsWith('/') ? hash : '/';
}

export function useRoute(): string {
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export function navigate(route: string): void {
  location.hash = route;
}

/** The route without its query: `/reset?token=x` is the page `/reset`. */
export function pagePath(route: string): string {
  return route.split('?')[0] ?? route;
}

/** One query parameter of the route (`#/reset?token=…`). */
export function routeParam(route: string, name: string): string | undefined {
  const query = route.split('?')[1];
  return query ? (new URLSearchParams(query).get(name) ?? undefined) : undefined;
}
