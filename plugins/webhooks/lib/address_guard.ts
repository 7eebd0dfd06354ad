import dns from 'node:dns'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Only public unicast addresses may be reached, unless an operator allows
 * ranges (WEBHOOKS_ALLOWED_RANGES). Everything ipaddr.js classifies otherwise
 * is refused: loopback, private, link-local (169.254/16 holds the cloud
 * metadata address), unique-local (fd00:ec2::254 too), multicast, CGNAT
 * ("carrierGradeNat"), unspecified, broadcast, reserved and the
 * translation and tunnel blocks.
 */
export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number]

/** Parses `127.0.0.0/8,::1/128` (a bare address is its own /32 or /128). */
export function parseRanges(text: string | undefined | null): Cidr[] {
  return (text ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      if (part.includes('/')) return ipaddr.parseCIDR(part)
      const address = ipaddr.parse(part)
      return [address, address.kind() === 'ipv4' ? 32 : 128] as Cidr
    })
}

/** Why an address may not be reached, or null when it may. */
export function refusal(address: string, allowed: Cidr[] = []): string | null {
  if (!ipaddr.isValid(address)) return `not an IP address: ${address}`
  let parsed = ipaddr.parse(address)
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is judged as the IPv4 one.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  for (const [range, bits] of allowed)
    if (range.kind() === parsed.kind() && parsed.match(range as any, bits)) return null
  const kind = parsed.range()
  return kind === 'unicast' ? null : `address ${address} is ${kind}`
}

export class AddressRefused extends Error {
  readonly code = 'ADDRESS_REFUSED'
}

/**
 * A `lookup` for http.request: resolves the name, then refuses the answer
 * when any address is not allowed. Checked here, on the addresses the socket
 * will connect to, so a DNS answer that changes between a check and the
 * connection cannot slip through. `resolve` is replaceable for tests.
 */
export function guardedLookup(
  allowed: Cidr[],
  resolve: typeof dns.lookup = dns.lookup
): LookupFunction {
  return ((hostname: string, options: any, callback: any) => {
    resolve(hostname, { ...options, all: true }, (error: any, addresses: any) => {
      if (error) return callback(error)
      const list: { address: string; family: number }[] = Array.isArray(addresses)
        ? addresses
        : [{ address: addresses, family: options?.family ?? 4 }]
      for (const entry of list) {
        const why = refusal(entry.address, allowed)
        if (why) return callback(new AddressRefused(`${hostname}: ${why}`))
      }
      if (list.length === 0) return callback(new Error(`${hostname}: no address`))
      if (options?.all) return callback(null, list)
      callback(null, list[0].address, list[0].family)
    })
  }) as LookupFunction
}
