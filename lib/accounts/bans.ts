// Address bans (docs/ABUSE.md "Bans"): an IPv4 or IPv6 network, a reason and an optional end. Every group
// API Gateway reaches refuses a banned viewer (lib/http/ban-check.ts); the few bans live in one partition
// read whole, each item with the table's TTL at its end.
import { randomUUID } from 'node:crypto';
import { type BlockList, isIP, BlockList as NetworkList } from 'node:net';
import { errors } from '#lib/core/errors.ts';
import { conditionFailedAs, epochSeconds, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { ipv6Groups } from './client.ts';

/** The one partition of every ban (the `bans` need's grant is limited to it). */
export const BANS_PARTITION = 'BANS';
const banKey = (id: string) => ({ pk: BANS_PARTITION, sk: `BAN#${id}` });

export interface Network {
  /** `address/prefix`, the address being the network's own (host bits zero). */
  cidr: string;
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/**
 * An address or a prefix as a network: a bare address is /32 or /128; host bits are cleared; an
 * IPv4-mapped IPv6 address or prefix (::ffff:a.b.c.d, /96 and longer) is the IPv4 network it carries.
 * Undefined when it is neither.
 */
export function networkOf(text: string): Network | undefined {
  const [, given, bits] = /^([0-9A-Fa-f:.]+)(?:\/(\d{1,3}))?$/.exec(text.trim()) ?? [];
  const kind = isIP(given ?? '');
  // Both kinds as eight 16-bit groups: an IPv4 address as its mapped IPv6 (::ffff:a.b.c.d, /96 + its prefix).
  const groups = kind === 0 ? undefined : ipv6Groups(kind === 4 ? `::ffff:${given}` : given!.toLowerCase());
  const width = kind === 4 ? 32 : 128;
  const length = bits === undefined ? width : Number(bits);
  if (!groups || length > width) return undefined;
  const prefix = length + 128 - width;
  const masked = groups.map(
    (group, i) => group & ((0xffff << (16 - Math.min(16, Math.max(0, prefix - 16 * i)))) & 0xffff),
  );
  if (prefix >= 96 && masked.slice(0, 6).join() === '0,0,0,0,0,65535') {
    const address = masked
      .slice(6)
      .flatMap((group) => [group >> 8, group & 0xff])
      .join('.');
    return { cidr: `${address}/${prefix - 96}`, address, prefix: prefix - 96, family: 'ipv4' };
  }
  // The URL parser writes an IPv6 address in its canonical short form (RFC 5952).
  const full = masked.map((group) => group.toString(16)).join(':');
  const address = new URL(`http://[${full}]`).hostname.slice(1, -1);
  return { cidr: `${address}/${prefix}`, address, prefix, family: 'ipv6' };
}

/** A list of networks an address can be checked against (node's BlockList). */
export function blockListOf(networks: readonly Network[]): BlockList {
  const list = new NetworkList(); // node's BlockList, not lib/moderation's
  for (const { address, prefix, family } of networks) list.addSubnet(address, prefix, family);
  return list;
}

/** Whether `address` (IPv4-mapped IPv6 counts as its IPv4) is in `list`; a non-address never is. */
export function listed(list: BlockList, address: string): boolean {
  const network = networkOf(address);
  return network !== undefined && list.check(network.address, network.family);
}

export interface Ban {
  id: string;
  cidr: string;
  reason: string;
  created_at: string;
  created_by: string;
  /** Null: permanent. */
  expires_at: string | null;
}

/** Whether the ban is still in force at `now`. */
export const inForce = (ban: Ban, now: Date) =>
  ban.expires_at === null || Date.parse(ban.expires_at) > now.getTime();

export interface NewBan {
  cidr: string;
  reason: string;
  expires_at?: string;
}

export interface BansDeps {
  table: Table;
  clock: () => Date;
  /** Called after each change, so this container enforces it at once (its ban cache's refresh). */
  changed: () => Promise<void>;
}

export class Bans {
  constructor(private readonly deps: BansDeps) {}

  /** Every ban in force, as stored (one partition, read whole). */
  async list(): Promise<Ban[]> {
    const bans: Ban[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.deps.table.query({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': BANS_PARTITION },
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      bans.push(...page.items.map(banOf));
      start = page.lastKey;
    } while (start);
    const now = this.deps.clock();
    return bans.filter((ban) => inForce(ban, now));
  }

  /** A new ban; refused when it would cover `requesterIp`, the acting administrator's own address. */
  async create(input: NewBan, adminId: string, requesterIp: string): Promise<Ban> {
    const network = networkOf(input.cidr);
    if (!network)
      throw errors.validation([{ field: 'cidr', message: 'must be an IPv4 or IPv6 address or prefix' }]);
    const now = this.deps.clock();
    const ends = input.expires_at === undefined ? undefined : new Date(input.expires_at);
    if (ends && epochSeconds(ends) <= epochSeconds(now))
      throw errors.validation([{ field: 'expires_at', message: 'must be in the future' }]);
    if (listed(blockListOf([network]), requesterIp))
      throw errors.badRequest(`cidr: ${network.cidr} covers your own address; a ban must not lock you out`);
    const id = randomUUID();
    const item = {
      ...banKey(id),
      id,
      cidr: network.cidr,
      reason: input.reason,
      created_at: isoWithOffset(now),
      created_by: adminId,
      // The table's TTL: DynamoDB removes the item some time after; reads check the end themselves.
      ...(ends ? { expires_at: epochSeconds(ends) } : {}),
    };
    await this.deps.table.put(item);
    await this.deps.changed();
    return banOf(item);
  }

  /** Lifts a ban: enforced no more from this container at once, from the others within their refresh. */
  async lift(id: string): Promise<{ id: string; deleted: true }> {
    await this.deps.table
      .delete(banKey(id), { ConditionExpression: 'attribute_exists(pk)' })
      .catch(conditionFailedAs(() => errors.notFound('ban: not found')));
    await this.deps.changed();
    return { id, deleted: true };
  }
}

function banOf(item: Record<string, unknown>): Ban {
  const ends = item.expires_at;
  return {
    id: String(item.id),
    cidr: String(item.cidr),
    reason: String(item.reason),
    created_at: String(item.created_at),
    created_by: String(item.created_by),
    expires_at: typeof ends === 'number' ? isoWithOffset(new Date(ends * 1000)) : null,
  };
}
