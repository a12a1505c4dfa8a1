// The console's own icon (web/public/favicon.svg): every page the service serves names it (or the site's),
// so no browser asks for a missing /favicon.ico.
export const DEFAULT_FAVICON = '/console/favicon.svg';
