// The web console's Content-Security-Policy: one policy for the CDN (infra/edge.ts) and the local server.

/**
 * Its own scripts and styles only (no inline script, no third-party origin), images from itself (and
 * data:/blob: previews), calls to the API on the same origin and presigned PUTs to storage
 * (`uploadOrigins`: the files bucket's origins in AWS, the S3 stand-in's locally).
 */
export function consoleContentSecurityPolicy(uploadOrigins: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src ${["'self'", ...uploadOrigins].join(' ')}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}
