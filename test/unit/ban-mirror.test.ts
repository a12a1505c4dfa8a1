// The ban-mirror worker against a fake IP set writer (docs/DEPLOYMENT.md "WAF"): which networks end up in
// which set, ended bans dropped, nothing written without sets; and the WAF adapter against a fake client:
// the lock token, an unchanged set left alone, one retry on a lost race.
import { describe, expect, it } from 'vitest';
import { createBanMirrorHandler } from '#functions/ban-mirror/handler.ts';
import type { Ban } from '#lib/accounts/bans.ts';
import { ipSetOf, wafIpSetWriter } from '#lib/platform/aws/waf.ts';
import { lambdaContext } from '#test/support/events.ts';

const NOW = new Date('2026-06-01T12:00:00Z');
const ban = (cidr: string, expires_at: string | null = null): Ban => ({
  id: cidr,
  cidr,
  reason: 'r',
  created_at: '2026-06-01T00:00:00+00:00',
  created_by: 'admin',
  expires_at,
});
const SETS = {
  ipv4: 'arn:aws:wafv2:us-east-1:123456789012:global/ipset/BannedIpv4-x/11111111-2222-3333-4444-555555555555',
  ipv6: 'arn:aws:wafv2:us-east-1:123456789012:global/ipset/BannedIpv6-x/66666666-7777-8888-9999-000000000000',
};

function run(bans: Ban[], withSets = true) {
  const written: Record<string, readonly string[]> = {};
  const handler = createBanMirrorHandler(() => ({
    bans: { list: async () => bans },
    sets: withSets ? SETS : undefined,
    writer: {
      replace: async (arn, cidrs) => {
        written[arn] = cidrs;
      },
    },
    clock: () => NOW,
  }));
  return handler({}, lambdaContext).then((result) => ({ result, written }));
}

describe('the ban-mirror worker', () => {
  it('writes IPv4 networks to the IPv4 set and IPv6 to the IPv6 set, ended bans dropped', async () => {
    const { result, written } = await run([
      ban('203.0.113.0/24'),
      ban('198.51.100.7/32', '2026-06-02T00:00:00+00:00'),
      ban('192.0.2.0/24', '2026-06-01T11:59:59+00:00'),
      ban('2001:db8:abcd:12::/64'),
      ban('2001:db8:beef::/48', '2026-06-01T12:00:00+00:00'),
      ban('2001:db8:1::/48', '2027-01-01T00:00:00+00:00'),
      ban('0.0.0.0/0'),
    ]);
    expect(written[SETS.ipv4]).toEqual(['203.0.113.0/24', '198.51.100.7/32']);
    expect(written[SETS.ipv6]).toEqual(['2001:db8:abcd:12::/64', '2001:db8:1::/48']);
    expect(result).toEqual({ ipv4: written[SETS.ipv4], ipv6: written[SETS.ipv6] });
  });

  it('empties both sets when no ban is in force, and writes nothing without sets', async () => {
    const { written } = await run([ban('192.0.2.0/24', '2026-06-01T00:00:00+00:00')]);
    expect(written).toEqual({ [SETS.ipv4]: [], [SETS.ipv6]: [] });
    const none = await run([ban('192.0.2.0/24')], false);
    expect(none.written).toEqual({});
    expect(none.result).toEqual({ skipped: 'no WAF IP sets' });
  });
});

describe('the WAF IP set writer', () => {
  /** A fake WAFv2 client: a set with addresses, a lock token per version, `races` lost updates first. */
  function fakeWaf(addresses: string[], races = 0) {
    const calls: Array<{ command: string; input: Record<string, unknown> }> = [];
    let version = 0;
    const send = async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      calls.push({ command: command.constructor.name, input: command.input });
      if (command.constructor.name === 'GetIPSetCommand')
        return { IPSet: { Addresses: addresses, Description: 'kept' }, LockToken: `token-${version}` };
      if (races-- > 0) {
        version++;
        throw Object.assign(new Error('lost'), { name: 'WAFOptimisticLockException' });
      }
      return {};
    };
    return { calls, client: async () => ({ send }) as never };
  }

  it('reads the lock token and replaces the whole list, keeping the description', async () => {
    const waf = fakeWaf(['192.0.2.0/24']);
    await wafIpSetWriter(waf.client).replace(SETS.ipv4, ['203.0.113.0/24']);
    expect(waf.calls.map((call) => call.command)).toEqual(['GetIPSetCommand', 'UpdateIPSetCommand']);
    expect(waf.calls[1]!.input).toEqual({
      ...ipSetOf(SETS.ipv4),
      Addresses: ['203.0.113.0/24'],
      LockToken: 'token-0',
      Description: 'kept',
    });
    expect(ipSetOf(SETS.ipv4)).toEqual({
      Name: 'BannedIpv4-x',
      Id: '11111111-2222-3333-4444-555555555555',
      Scope: 'CLOUDFRONT',
    });
  });

  it('leaves an unchanged set alone, and retries a lost race once with a fresh token', async () => {
    const same = fakeWaf(['203.0.113.0/24', '192.0.2.0/24']);
    await wafIpSetWriter(same.client).replace(SETS.ipv4, ['192.0.2.0/24', '203.0.113.0/24']);
    expect(same.calls.map((call) => call.command)).toEqual(['GetIPSetCommand']);

    const raced = fakeWaf([], 1);
    await wafIpSetWriter(raced.client).replace(SETS.ipv4, ['192.0.2.0/24']);
    expect(raced.calls.map((call) => call.command)).toEqual([
      'GetIPSetCommand',
      'UpdateIPSetCommand',
      'GetIPSetCommand',
      'UpdateIPSetCommand',
    ]);
    expect(raced.calls[3]!.input.LockToken).toBe('token-1');

    const lost = fakeWaf([], 2);
    await expect(wafIpSetWriter(lost.client).replace(SETS.ipv4, ['192.0.2.0/24'])).rejects.toThrow('lost');
  });
});
