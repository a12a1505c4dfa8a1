// Signing in with another provider (docs/ACCOUNTS.md "Sign in with another provider"):
// start (a single-use state, nonce and PKCE verifier for 10 minutes), callback (the provider's answer
// checked, then a single-use ticket in the console's URL, never a token), and the console's exchange of the
// ticket for the same answer a password login gives, or for the new account's username form. An identity
// links one account; only its owner links it, after the password; never a matching e-mail by itself.
import { createHash, randomBytes } from 'node:crypto';
import { AppError, errors, isRefusal } from '#lib/core/errors.ts';
import {
  ConditionFailedError,
  conditionFailedAs,
  epochSeconds,
  type Item,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { Challenges } from './challenge.ts';
import type { ClientInfo } from './client.ts';
import type { DeviceTokens } from './device-tokens.ts';
import { loginAnswer } from './login.ts';
import type { Account, Role } from './model.ts';
import { type OAuthProviders, type ProviderIdentity, providerRefusal } from './oauth-providers.ts';
import { hashPassword } from './passwords.ts';
import { identityKey, linkKey } from './provider-identities.ts';
import { type AccountRepository, accountKey } from './repository.ts';
import type { RequestLimits } from './request-limits.ts';
import type { SecurityChanges } from './security-changes.ts';
import type { SecurityEvents } from './security-events.ts';
import type { SessionService } from './sessions.ts';

const STATE_SECONDS = 10 * 60;
const TICKET_SECONDS = 5 * 60;

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');
const random = () => randomBytes(32).toString('base64url');
const stateKey = (state: string) => ({ pk: `oauth-state#${digest(state)}`, sk: 'state' });
const ticketKey = (ticket: string) => ({ pk: `oauth-ticket#${digest(ticket)}`, sk: 'ticket' });
const usedState = () =>
  providerRefusal('This sign-in was already used, has expired or was not started here; start again');
const usedTicket = () => errors.unauthorized('ticket: is invalid, used or expired; sign in again');

interface StateItem extends Item {
  provider: string;
  door: Role;
  nonce: string;
  verifier: string;
  /** A link flow: the account that started it (after its password). */
  account_id?: string;
}

type Ticket =
  | { kind: 'login'; account_id: string }
  | { kind: 'signup'; provider: string; subject: string; email: string };

export interface ProviderSignInDeps {
  table: Table;
  accounts: AccountRepository;
  providers: OAuthProviders;
  requestLimits: RequestLimits;
  sessions: SessionService;
  devices: DeviceTokens;
  events: SecurityEvents;
  challenges: Pick<Challenges, 'issue'>;
  /** A link and an unlink: the account's event and a notice mail. */
  changes: SecurityChanges;
  /** `base_url`: the console the callback sends the browser back to. */
  baseUrl: string;
}

export class ProviderSignIn {
  constructor(private readonly deps: ProviderSignInDeps) {}

  /** GET /auth/providers: `{id, label}` of each provider at the door. */
  providers(door: Role) {
    return this.deps.providers.list(door);
  }

  /** GET /auth/oauth/{provider}/start[?door=admin]: the provider's sign-in page. */
  async start(providerId: string, door: Role, client: ClientInfo): Promise<string> {
    await this.deps.requestLimits.limitIp(client.ip);
    const provider = this.deps.providers.get(providerId);
    if (door === 'admin' && !provider.admin_door)
      throw errors.forbidden(`provider: administrators do not sign in with ${provider.label}`);
    return this.begin(providerId, { door });
  }

  /** POST /auth/identities/{provider} `{current_password}`: where the owner links the provider. */
  async startLink(account: Account, providerId: string, input: { current_password: string }) {
    const provider = this.deps.providers.get(providerId);
    if (account.role === 'admin' && !provider.admin_door)
      throw errors.forbidden(`provider: administrators do not sign in with ${provider.label}`);
    await this.deps.requestLimits.requirePassword(account, input.current_password, 'current_password');
    return { url: await this.begin(providerId, { door: account.role, account_id: account.id }) };
  }

  /**
   * GET /auth/oauth/{provider}/callback: the browser back at the console, with a ticket, a link done, or
   * the refusal in words (nothing created).
   */
  async callback(
    providerId: string,
    query: Record<string, string>,
    rawQuery: string,
    client: ClientInfo,
  ): Promise<string> {
    try {
      return `${this.deps.baseUrl}/#/oauth?${await this.answer(providerId, query, rawQuery, client)}`;
    } catch (error) {
      if (!(error instanceof AppError) || !isRefusal(error)) throw error;
      return `${this.deps.baseUrl}/#/oauth?${new URLSearchParams({ error: error.message })}`;
    }
  }

  /** POST /auth/oauth/ticket `{ticket}`: a session (or the TOTP step), or the new account's form. */
  async exchange(input: { ticket: string }, client: ClientInfo) {
    const { table, accounts } = this.deps;
    await this.deps.requestLimits.limitIp(client.ip);
    const ticket = await table
      .take<Item & Ticket>(ticketKey(input.ticket), liveCondition(table))
      .catch(conditionFailedAs(usedTicket));
    if (ticket.kind === 'signup') {
      const next = await this.issueTicket({
        kind: 'signup',
        provider: ticket.provider,
        subject: ticket.subject,
        email: ticket.email,
      });
      const { label } = this.deps.providers.get(ticket.provider);
      return { signup: { provider: ticket.provider, label, email: ticket.email, ticket: next } };
    }
    const account = await accounts.get(ticket.account_id);
    if (!account) throw usedTicket();
    return this.logIn(account, client);
  }

  /** POST /auth/oauth/signup `{ticket, username}`: the new account, signed in. */
  async signup(input: { ticket: string; username: string }, client: ClientInfo) {
    const { table, accounts } = this.deps;
    await this.deps.requestLimits.limitIp(client.ip);
    const ticket = await table.get<Item & Ticket>(ticketKey(input.ticket));
    if (ticket?.kind !== 'signup' || (ticket.expires_at as number) <= epochSeconds(table.clock()))
      throw usedTicket();
    // No password anyone knows: one may be set by a reset (docs/ACCOUNTS.md).
    const passwordHash = await hashPassword(random());
    let created: Account;
    try {
      created = await accounts.create(
        {
          username: input.username,
          email: ticket.email,
          emailVerified: true,
          role: 'user',
          passwordHash,
          viaProvider: true,
        },
        (id) => [
          { Delete: { Key: ticketKey(input.ticket), ...liveCondition(table) } },
          ...this.linkItems(ticket.provider, ticket.subject, ticket.email, id, false),
        ],
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) throw usedTicket();
      throw error;
    }
    return this.logIn(created, client);
  }

  /** GET /auth/identities: the providers linked to the account. */
  async list(account: Account) {
    const { items } = await this.deps.table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': `account#${account.id}`, ':prefix': 'identity#' },
    });
    return items.map((item) => ({
      provider: item.provider as string,
      label:
        this.deps.providers.list().find((p) => p.id === item.provider)?.label ?? (item.provider as string),
      email: (item.email as string | undefined) ?? null,
      linked_at: isoWithOffset(new Date(item.linked_at as string)),
    }));
  }

  /** DELETE /auth/identities/{provider}: never the account's last way in. */
  async unlink(account: Account, providerId: string, client: ClientInfo) {
    const { table } = this.deps;
    const link = await table.get(linkKey(account.id, providerId));
    if (!link) throw errors.notFound('provider: is not linked to this account');
    await table
      .transact([
        { Delete: { Key: linkKey(account.id, providerId), ConditionExpression: 'attribute_exists(pk)' } },
        {
          Delete: {
            Key: identityKey(providerId, link.subject as string),
            ConditionExpression: 'account_id = :id',
            ExpressionAttributeValues: { ':id': account.id },
          },
        },
        {
          Update: {
            Key: accountKey(account.id),
            UpdateExpression: 'ADD identity_count :minus',
            // Another way in stays: another provider, a passkey, or a password someone set.
            ConditionExpression:
              'identity_count > :one OR passkey_count > :zero OR attribute_not_exists(unusable_hash) OR password_hash <> unusable_hash',
            ExpressionAttributeValues: { ':minus': -1, ':one': 1, ':zero': 0 },
          },
        },
      ])
      .catch(
        conditionFailedAs(() =>
          errors.conflict(
            'provider: is the last way to sign in to this account; set a password (reset) or add a passkey first',
          ),
        ),
      );
    await this.deps.changes.record(account, 'provider_unlinked', client, { kind: 'provider_unlinked' });
    return { provider: providerId, unlinked: true as const };
  }

  private async begin(provider: string, bound: { door: Role; account_id?: string }): Promise<string> {
    const { table, providers } = this.deps;
    const checks = { state: random(), nonce: random(), codeVerifier: random() };
    const now = table.clock();
    await table.putNew({
      ...stateKey(checks.state),
      provider,
      ...bound,
      nonce: checks.nonce,
      verifier: checks.codeVerifier,
      created_at: now.toISOString(),
      expires_at: epochSeconds(now) + STATE_SECONDS,
    });
    return providers.authorizationUrl(providers.get(provider), checks);
  }

  /** The callback's query for the console: `ticket=`, `linked=`, or a refusal thrown. */
  private async answer(
    providerId: string,
    query: Record<string, string>,
    rawQuery: string,
    client: ClientInfo,
  ) {
    const { table, providers, accounts } = this.deps;
    const provider = providers.get(providerId);
    if (!query.state) throw providerRefusal(query.error ? providerSaid(query.error) : 'state: is missing');
    // Taken once, by this provider's callback only: a replayed or foreign state finds nothing.
    const live = liveCondition(table);
    const state = await table
      .take<StateItem>(stateKey(query.state), {
        ConditionExpression: `${live.ConditionExpression} AND provider = :provider`,
        ExpressionAttributeValues: { ...live.ExpressionAttributeValues, ':provider': providerId },
      })
      .catch(conditionFailedAs(usedState));
    // The provider's own refusal (the person declined): the state is spent, nothing else happens.
    if (query.error) throw providerRefusal(providerSaid(query.error));
    const identity = await providers.identity(provider, rawQuery, {
      state: query.state,
      nonce: state.nonce,
      codeVerifier: state.verifier,
    });
    if (state.account_id) {
      await this.link(state.account_id, providerId, identity, client);
      return new URLSearchParams({ linked: providerId });
    }
    const claim = await table.get(identityKey(providerId, identity.subject));
    if (claim) {
      const account = await accounts.get(claim.account_id as string);
      if (!account) throw usedState();
      if (account.status !== 'active') throw errors.forbidden('account disabled');
      if (account.role !== state.door)
        throw providerRefusal(
          account.role === 'admin'
            ? 'Administrators sign in at the administrators\u2019 door'
            : 'This account is not an administrator',
        );
      return new URLSearchParams({
        ticket: await this.issueTicket({ kind: 'login', account_id: account.id }),
      });
    }
    if (state.door === 'admin')
      throw providerRefusal(`No administrator is linked to this ${provider.label} account`);
    if (!identity.email || !identity.emailVerified)
      throw providerRefusal(
        `Your ${provider.label} account has no verified e-mail address; no account was created`,
      );
    // A matching e-mail never links by itself: its owner links from the security page.
    if (await accounts.ownerOf(identity.email))
      throw errors.conflict(
        `An account already uses ${identity.email}: log in to it and link ${provider.label} from the security page`,
      );
    const ticket = await this.issueTicket({
      kind: 'signup',
      provider: providerId,
      subject: identity.subject,
      email: identity.email,
    });
    return new URLSearchParams({ ticket });
  }

  private async link(accountId: string, provider: string, identity: ProviderIdentity, client: ClientInfo) {
    const { label } = this.deps.providers.get(provider);
    const claim = await this.deps.table.get(identityKey(provider, identity.subject));
    if (claim?.account_id === accountId) return;
    if (claim) throw errors.conflict(`This ${label} account is already linked to another account`);
    await this.deps.table
      .transact(this.linkItems(provider, identity.subject, identity.email, accountId))
      .catch(
        conditionFailedAs(() => errors.conflict(`${label} is already linked, here or to another account`)),
      );
    const account = await this.deps.accounts.get(accountId);
    if (account)
      await this.deps.changes.record(account, 'provider_linked', client, { kind: 'provider_linked' });
  }

  /**
   * The identity's claim, the account's row for it, and (`count`) its count on the account, which must be
   * active; an account created with them counts it itself.
   */
  private linkItems(
    provider: string,
    subject: string,
    email: string | null,
    owner: string,
    count = true,
  ): TransactItem[] {
    const now = this.deps.table.clock().toISOString();
    const items: TransactItem[] = [
      {
        Put: {
          Item: { ...identityKey(provider, subject), account_id: owner, provider, created_at: now },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          Item: {
            ...linkKey(owner, provider),
            provider,
            subject,
            ...(email ? { email } : {}),
            linked_at: now,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ];
    if (count)
      items.push({
        Update: {
          Key: accountKey(owner),
          UpdateExpression: 'ADD identity_count :one',
          ConditionExpression: 'attribute_exists(pk) AND #status = :active',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':one': 1, ':active': 'active' },
        },
      });
    return items;
  }

  private async issueTicket(ticket: Ticket): Promise<string> {
    const { table } = this.deps;
    const value = random();
    const now = table.clock();
    await table.putNew({ ...ticketKey(value), ...ticket, expires_at: epochSeconds(now) + TICKET_SECONDS });
    return value;
  }

  /** The answer of a password login: the TOTP (or passkey) step when the account has one, else a session. */
  private async logIn(account: Account, client: ClientInfo) {
    if (account.status !== 'active') throw errors.forbidden('account disabled');
    if (account.totp_enabled) return this.deps.challenges.issue(account);
    return loginAnswer(this.deps, account, client, { method: 'provider' });
  }
}

/** The provider's error code (RFC 6749 4.1.2.1), shown only when it looks like one: no text of a stranger's. */
const providerSaid = (error: string) =>
  `The provider refused the sign-in: ${/^[\x20-\x7e]{1,64}$/.test(error) && !/\s/.test(error) ? error : 'an error'}`;

/** A single-use item still live: it exists and has not expired. */
function liveCondition(table: Table) {
  return {
    ConditionExpression: 'attribute_exists(pk) AND expires_at > :now',
    ExpressionAttributeValues: { ':now': epochSeconds(table.clock()) },
  };
}
