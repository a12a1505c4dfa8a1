// Establishes the caller for a route's auth kind (lib/routes.ts). Sessions and API tokens land here.
import { errors } from '../http/errors.ts';
import type { Authenticator } from '../http/handler.ts';

export const authenticate: Authenticator = async (_request, kind) => {
  if (kind === 'none' || kind === 'signed') return undefined;
  throw errors.unauthorized();
};
