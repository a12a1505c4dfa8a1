// Lambda entry of the `payments` group. Its routes answer 501 until their capability lands.
import { authenticate } from '#lib/auth/authenticate.ts';
import { createGroupHandler } from '#lib/http/handler.ts';

export const handler = createGroupHandler('payments', {}, { authenticate });
