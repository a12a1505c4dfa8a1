// oidc-provider ships no types (and @types/oidc-provider is not installed): what the tests use of it.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface GrantInstance {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface Context {
    oidc: {
      provider: Provider;
      client?: { clientId: string };
      session?: { accountId?: string };
    };
  }
  export default class Provider {
    constructor(
      issuer: string,
      configuration: Record<string, unknown> & {
        findAccount?: (
          ctx: Context,
          sub: string,
        ) => Promise<{ accountId: string; claims: () => Promise<object> }>;
        loadExistingGrant?: (ctx: Context) => Promise<GrantInstance | undefined>;
      },
    );
    Grant: new (init: {
      clientId: string;
      accountId: string;
    }) => GrantInstance;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
