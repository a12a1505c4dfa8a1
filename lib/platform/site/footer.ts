// The site's footer as stored and shown (docs/DEPLOYMENT.md "Branding"): sanitize-html with a small allow-list.
import sanitizeHtml from 'sanitize-html';

/** The footer as stored and shown: inline text, paragraphs and links; no script, style, handler or image. */
export function sanitizeFooter(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: ['a', 'b', 'strong', 'i', 'em', 'small', 'span', 'p', 'br'],
    allowedAttributes: { a: ['href', 'title', 'rel'] },
    allowedSchemes: ['https', 'http', 'mailto'],
    allowProtocolRelative: false,
    transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer' }) },
  }).trim();
}
