// Where a webhook may be delivered (docs/WEBHOOKS.md "Targets"): never to loopback, private, link-local or
// other special-purpose addresses (IANA's special-purpose registries), checked on the URL when it is
// registered and again on every address the resolver gives at connect time (a `lookup` for the request),
// so a name that later resolves to an inside address (DNS rebinding) is refused too. Local and test
// stages may allow them (`webhooks.allow_private_targets`), so a receiver on 127.0.0.1 can be used.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, BlockList as NetBlockList } from 'node:net';
import { errors } from '#lib/core/errors.ts';

const SPECIAL = new NetBlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  SPECIAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64 (reaches IPv4 inside addresses)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds IPv4)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const)
  SPECIAL.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address is special-purpose (IPv4-mapped IPv6 addresses are checked as their IPv4). */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return SPECIAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface TargetPolicy {
  /** Loopback, private and other special addresses, and plain http, allowed (local and test stages only). */
  allowPrivate: boolean;
}

/** The endpoint's URL as it is stored, or a 400 naming what is wrong with it. */
export function checkTargetUrl(raw: string, policy: TargetPolicy): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw errors.badRequest('url: is not a URL');
  }
  if (!policy.allowPrivate && isRefusedHost(url.hostname))
    throw errors.badRequest('url: must not name a loopback, private, link-local or other special address');
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:'))
    throw errors.badRequest('url: must be an https URL');
  if (url.username || url.password) throw errors.badRequest('url: must not carry a user name or password');
  url.hash = '';
  return url.toString();
}

function isRefusedHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host)) return isSpecialAddress(host);
  return host === 'localhost' || host.endsWith('.localhost') || !host.includes('.');
}

/** Thrown (at connect time) when the target's name resolves to a special address. */
export class RefusedTargetError extends Error {
  constructor(address: string) {
    super(`the target resolves to a refused address (${address})`);
    this.name = 'RefusedTargetError';
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http(s).request: resolves every address of the name and refuses the connection when any
 * of them is special (unless the policy allows them), so what is checked is what is connected to.
 */
export function guardedLookup(policy: TargetPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = policy.allowPrivate ? undefined : addresses.find((a) => isSpecialAddress(a.address));
      if (refused) return callback(new RefusedTargetError(refused.address), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
