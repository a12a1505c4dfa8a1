// The QR code of a TOTP setup's otpauth link, as an SVG data URL ready for an <img> (docs/ACCOUNTS.md).
// uqr (pure TypeScript, no dependencies) is loaded on the first setup only, not at every cold start of the
// accounts group: it is installed beside the bundle rather than inside it (infra/bundling.ts TOTP_PACKAGES).

let uqr: Promise<typeof import('uqr')> | undefined;
function loadUqr(): Promise<typeof import('uqr')> {
  uqr ??= import('uqr').catch((error: unknown) => {
    uqr = undefined;
    throw error;
  });
  return uqr;
}

/** `data:image/svg+xml;base64,...` of a QR code (error correction M, the standard 4-module quiet zone). */
export async function qrDataUrl(text: string): Promise<string> {
  const { renderSVG } = await loadUqr();
  const svg = renderSVG(text, { ecc: 'M', border: 4, pixelSize: 4 });
  return `data:image/svg+xml;base64,${Buffer.from(svg, 'utf8').toString('base64')}`;
}
