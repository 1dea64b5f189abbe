// `allowedSources` of the RTP source as one check per datagram: a set of addresses (an
// IPv4-mapped IPv6 form is its IPv4 address) or the user's predicate, which may not throw a
// datagram through (a throw refuses it).
import type dgram from 'node:dgram';

/** What `allowedSources` may be: addresses, or a predicate on the sender. */
export type AllowedSources = readonly string[] | ((remote: { readonly address: string; readonly port: number }) => boolean);

/** `::ffff:10.0.0.5` and `10.0.0.5` are one sender. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address.toLowerCase();
}

/** The check of a datagram's sender, or undefined when any sender is taken. */
export function sourceFilter(allowed: AllowedSources | undefined): ((rinfo: dgram.RemoteInfo) => boolean) | undefined {
  if (allowed === undefined) return undefined;
  if (typeof allowed === 'function') {
    return (rinfo) => {
      try {
        return allowed({ address: rinfo.address, port: rinfo.port }) === true;
      } catch {
        return false;
      }
    };
  }
  const set = new Set(allowed.map(plainAddress));
  return (rinfo) => set.has(plainAddress(rinfo.address));
}
