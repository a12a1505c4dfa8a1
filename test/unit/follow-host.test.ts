// The local server's links on the address the browser used (infra/local/follow-host.ts): only while
// base_url is npm start's own loopback address, only to a plain Host, never a longer port, never bytes.
import { describe, expect, it } from 'vitest';
import { followRequestHost, loopbackOrigin } from '#infra/local/follow-host.ts';

const answer = (body: string, extra = {}) => ({
  statusCode: 200,
  headers: { 'content-security-policy': "img-src 'self' http://localhost:3000" },
  body,
  isBase64Encoded: false,
  ...extra,
});

describe('links that follow the request host', () => {
  it("applies to a loopback base_url on this server's own port only", () => {
    expect(loopbackOrigin('http://localhost:3000', 3000)).toBe('http://localhost:3000');
    expect(loopbackOrigin('http://127.0.0.1:3000', 3000)).toBe('http://127.0.0.1:3000');
    expect(loopbackOrigin('http://localhost:3000', 0)).toBeUndefined();
    expect(loopbackOrigin('https://img.example.com', 443)).toBeUndefined();
  });

  it('moves links and the policy onto the Host asked, leaving a longer port and binary bodies alone', () => {
    const moved = followRequestHost(
      answer('{"url":"http://localhost:3000/i/a.png","other":"http://localhost:30001/x"}'),
      'http://localhost:3000',
      '192.168.1.5:3000',
    );
    expect(moved.body).toBe('{"url":"http://192.168.1.5:3000/i/a.png","other":"http://localhost:30001/x"}');
    expect(moved.headers?.['content-security-policy']).toBe("img-src 'self' http://192.168.1.5:3000");
    const bytes = answer('aHR0cDovL2xvY2FsaG9zdDozMDAw', { isBase64Encoded: true });
    expect(followRequestHost(bytes, 'http://localhost:3000', '127.0.0.1:3000').body).toBe(bytes.body);
  });

  it('copies nothing but a plain name or address into links', () => {
    const original = answer('"http://localhost:3000/s/x"');
    for (const host of ['evil.example/"><script>', 'a b:3000', '', undefined]) {
      expect(followRequestHost(original, 'http://localhost:3000', host)).toBe(original);
    }
  });
});
