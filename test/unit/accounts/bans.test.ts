// Address bans without a table (docs/ABUSE.md "Bans"): how an address or prefix becomes a network, what
// matches it, and the container's copy: read once per refresh (never per request), kept when a refresh
// fails, an end checked at each request. And the wiring: every group API Gateway reaches checks bans.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { GROUP_NEEDS } from '#functions/needs.ts';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { banCache } from '#lib/accounts/ban-cache.ts';
import { type Ban, blockListOf, listed, networkOf } from '#lib/accounts/bans.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';

describe('networkOf', () => {
  it('normalises addresses and prefixes to their network', () => {
    const cidrs: Array<[string, string | undefined]> = [
      ['192.0.2.77', '192.0.2.77/32'],
      ['192.0.2.77/24', '192.0.2.0/24'],
      ['10.1.2.3/0', '0.0.0.0/0'],
      ['2001:DB8:0:0:1::1', '2001:db8::1:0:0:1/128'],
      ['2001:db8:abcd:12:ff::1/64', '2001:db8:abcd:12::/64'],
      ['2001:db8:beef:1::/48', '2001:db8:beef::/48'],
      ['2001:db8::/33', '2001:db8::/33'],
      ['::ffff:192.0.2.1', '192.0.2.1/32'],
      ['::ffff:c000:0201/120', '192.0.2.0/24'],
      ['::ffff:0:0/95', '::fffe:0:0/95'],
      ['192.0.2.0/33', undefined],
      ['2001:db8::/129', undefined],
      ['fe80::1%eth0', undefined],
      ['256.0.0.1', undefined],
      ['1:2:3:4:5:6:7:8:9', undefined],
      ['host.example', undefined],
      ['10.0.0.0/-1', undefined],
      ['', undefined],
    ];
    for (const [input, cidr] of cidrs) expect(networkOf(input)?.cidr, input).toBe(cidr);
  });

  it('matches IPv4-mapped IPv6 addresses as their IPv4 and never a non-address', () => {
    const list = blockListOf([networkOf('198.18.0.0/15')!, networkOf('2001:db8::/32')!]);
    expect(listed(list, '198.19.255.255')).toBe(true);
    expect(listed(list, '::ffff:198.18.0.1')).toBe(true);
    expect(listed(list, '198.20.0.0')).toBe(false);
    expect(listed(list, '2001:db8:ffff::1')).toBe(true);
    expect(listed(list, '2001:db9::1')).toBe(false);
    expect(listed(list, '')).toBe(false);
    expect(listed(list, 'unknown')).toBe(false);
  });
});

const ban = (cidr: string, expires_at: string | null = null): Ban => ({
  id: cidr,
  cidr,
  reason: `because ${cidr}`,
  created_at: '2026-01-01T00:00:00+00:00',
  created_by: 'admin',
  expires_at,
});

describe('banCache', () => {
  it('reads once per refresh, not per request; keeps the last list when a read fails; ends bans on time', async () => {
    let now = Date.parse('2026-06-01T00:00:00Z');
    const read = vi.fn(async () => [ban('192.0.2.0/24', '2026-06-01T00:00:10+00:00'), ban('2001:db8::/48')]);
    const cache = banCache({ read, refreshSeconds: 30, clock: () => new Date(now) });
    for (let i = 0; i < 50; i++)
      expect((await cache.check('192.0.2.9'))?.reason).toBe('because 192.0.2.0/24');
    expect(read).toHaveBeenCalledTimes(1);
    expect(await cache.check('192.0.3.1')).toBeUndefined();
    // Past its end it holds no more, though the copy is not read again for 20 s.
    now += 10_000;
    expect(await cache.check('192.0.2.9')).toBeUndefined();
    expect((await cache.check('2001:db8:0:1::1'))?.cidr).toBe('2001:db8::/48');
    expect(read).toHaveBeenCalledTimes(1);
    // A failed refresh keeps the last list (and is not retried by every request).
    read.mockRejectedValueOnce(new Error('throttled'));
    now += 30_000;
    expect((await cache.check('2001:db8::5'))?.cidr).toBe('2001:db8::/48');
    expect((await cache.check('2001:db8::6'))?.cidr).toBe('2001:db8::/48');
    expect(read).toHaveBeenCalledTimes(2);
    // refresh() reads at once: a lifted ban is gone from this container's copy.
    read.mockResolvedValueOnce([]);
    await cache.refresh();
    expect(await cache.check('2001:db8::5')).toBeUndefined();
  });
});

describe('the wiring of bans', () => {
  const entryOf = (group: string) =>
    readFileSync(join(PROJECT_ROOT, `functions/${group}/handler.ts`), 'utf8');
  /** Whether a group's handler hands its chain a ban check, and its production entry builds one. */
  const checksBans = (group: string, text: string) =>
    /\bbans: (options\.bans|groupBans\()/.test(text) &&
    (text.includes(`groupBans('${group}', needs, config)`) || text.includes('deps().bans.cache.check'));

  it('gives every group API Gateway reaches (need frontDoor) the bans need and the check', () => {
    const reached = FUNCTION_GROUPS.filter((group) => GROUP_NEEDS[group].frontDoor);
    expect(reached).toHaveLength(FUNCTION_GROUPS.length);
    for (const group of reached) {
      expect(GROUP_NEEDS[group].bans, group).toBe(true);
      expect(checksBans(group, entryOf(group)), group).toBe(true);
    }
    // The check itself would fail on an entry without bans.
    expect(checksBans('meta', entryOf('meta').replaceAll('bans', 'x'))).toBe(false);
  });
});
