// Route schemas are built on first use (lib/http/handler.ts defineRoute), not at import, and the settings
// are checked by their shape (lib/platform/config/fast-path.ts): a cold start of a function builds no zod schema at
// all (docs/PERFORMANCE.md "Cold import").
import { describe, expect, it } from 'vitest';
import * as z from '#lib/platform/zod.ts';

describe('route schemas', () => {
  it('are not built when a function is imported; a route builds its own on first use, once', async () => {
    // Prepare: zod calls this hook once per schema or check it constructs (`postProcessor`, an internal hook
    // of zod 4 that zod/compile uses); the assertions below also prove it still counts.
    const settings = z.config();
    let built = 0;
    settings.postProcessor = () => {
      built += 1;
    };
    try {
      // Act: the settings first, as every function loads them.
      await import('#lib/platform/config/index.ts');
      const [auth] = await Promise.all([
        import('#functions/auth/handler.ts'),
        import('#functions/upload/handler.ts'),
        import('#functions/files/handler.ts'),
        import('#functions/payments/handler.ts'),
        import('#functions/payment-callback/handler.ts'),
      ]);
      const atImport = built;
      const login = auth.handler.routes['POST /auth/login'];
      const body = login?.body?.();
      const afterLogin = built;

      // Assess
      expect(atImport).toBe(0);
      expect(afterLogin).toBeGreaterThan(0);
      expect(login?.body?.()).toBe(body);
      expect(auth.handler.routes['POST /api/v1/auth/login']?.body?.()).toBe(body);
      expect(built).toBe(afterLogin);
    } finally {
      settings.postProcessor = undefined;
    }
  }, 60_000);
});
