// Lambda entry of the `payment-callback` group. Its routes answer 501 until their capability lands.
import { authenticate } from '#lib/auth/authenticate.ts';
import { createGroupHandler } from '#lib/http/handler.ts';

export const handler = createGroupHandler('payment-callback', {}, { authenticate });
