// Who is on the other end of an account request: the source address and user agent that sessions,
// security events and notice mails record, and the bucket per-address limits count by (IPv6 by /64).
import { isIP } from 'node:net';

export interface ClientInfo {
  /** The source address API Gateway (or the trusted CDN) names; never X-Forwarded-For. */
  ip: string;
  userAgent: string;
}

/** User agents are stored and shown back; a hostile one is cut rather than refused. */
export const MAX_USER_AGENT_CHARS = 256;

export function clientOf(request: { sourceIp: string; userAgent: string }): ClientInfo {
  return { ip: request.sourceIp ?? '', userAgent: (request.userAgent ?? '').slice(0, MAX_USER_AGENT_CHARS) };
}

/** For flows run outside a request (bootstrap, scripts). */
export const NO_CLIENT: ClientInfo = Object.freeze({ ip: '', userAgent: '' });

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
export function ipv6Groups(address: string): number[] | undefined {
  let text = address;
  // An embedded IPv4 tail (::ffff:192.0.2.1) becomes two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)
    ? groups
    : undefined;
}

/**
 * The key per-address limits count by: an IPv4 address as it is; an IPv6 address by its /64 (one
 * customer network usually holds a whole /64, so per-address buckets there would be unlimited);
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) as the IPv4 address it carries.
 */
export function addressBucket(ip: string): string {
  const address = ip.trim().replace(/%.*$/, '');
  const kind = isIP(address);
  if (kind === 4) return address;
  if (kind !== 6) return address || 'unknown';
  const groups = ipv6Groups(address.toLowerCase());
  if (!groups) return address;
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mapped) return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}
