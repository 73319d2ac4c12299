import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/** Resolves a host name to its addresses; injected in tests so they never depend on DNS. */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true })

const blocked = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT, also some cloud metadata (100.100.100.200)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24], // 6to4 relay anycast: a relay forwards to whatever the packet carries
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4')
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48], // NAT64 local use: translates to the operator's own IPv4 network
  ['100::', 64], // discard
  ['2001::', 32], // Teredo: tunnels to an IPv4 address hidden in the host part
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local, including fd00:ec2::254 (metadata)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6')
}

/** The eight 16-bit groups of an IPv6 address, or null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null
  let text = address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const octets = (dotted[1] as string).split('.').map(Number)
    const [a = 0, b = 0, c = 0, d = 0] = octets
    text = `${text.slice(0, -(dotted[1] as string).length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  const zeros = new Array(8 - left.length - right.length).fill(0)
  return [...left, ...zeros, ...right]
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIPv4(groups: number[]): string | null {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0
  if (zeroPrefix && (g5 === 0xffff || g5 === 0)) return v4(g6, g7) // ::ffff:a.b.c.d and ::a.b.c.d
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return v4(g6, g7) // ::ffff:0:a.b.c.d
  if (g0 === 0x64 && g1 === 0xff9b) return v4(g6, g7) // 64:ff9b::/96 and 64:ff9b:1::/48
  if (g0 === 0x2002) return v4(g1 ?? 0, g2 ?? 0) // 6to4
  return null
}

/**
 * True for addresses a webhook must not reach by default: loopback, private, link-local, cloud
 * metadata, unspecified, multicast and reserved, including IPv4 addresses dressed as IPv6.
 * Anything that is not a valid address counts as forbidden.
 */
export function isForbiddenAddress(raw: string): boolean {
  const address = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const family = isIP(address)
  if (family === 4) return blocked.check(address, 'ipv4')
  if (family !== 6) return true
  const groups = ipv6Groups(address)
  if (!groups) return true
  const v4 = embeddedIPv4(groups)
  if (v4 !== null && blocked.check(v4, 'ipv4')) return true
  return blocked.check(address, 'ipv6')
}

export class ForbiddenAddressError extends Error {
  override name = 'ForbiddenAddressError'
  readonly code = 'EWEBHOOKFORBIDDEN'
}

/**
 * A `lookup` for http(s).request that resolves with `resolve` and refuses the connection when any
 * address of the host is forbidden. The socket connects to exactly the address checked here, so a
 * name that resolves differently a second time (DNS rebinding) cannot slip past.
 */
export function guardedLookup(resolve: Resolver): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname).then(
      (addresses) => {
        const bad = addresses.find((a) => isForbiddenAddress(a.address))
        if (addresses.length === 0 || bad) {
          const what = bad ? `a forbidden address (${bad.address})` : 'no address'
          callback(new ForbiddenAddressError(`${hostname} resolves to ${what}`))
          return
        }
        const first = addresses[0] as { address: string; family: number }
        if (options.all) callback(null, addresses)
        else callback(null, first.address, first.family)
      },
      (error: unknown) => callback(error),
    )
  }) as LookupFunction
}

/** A resolver's answers through plain dns semantics, with no check: for allowed private URLs. */
export function plainLookup(resolve: Resolver): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname).then(
      (addresses) => {
        const first = addresses[0]
        if (!first) callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }))
        else if (options.all) callback(null, addresses)
        else callback(null, first.address, first.family)
      },
      (error: unknown) => callback(error),
    )
  }) as LookupFunction
}

/**
 * A host name as the checks compare it: brackets of an IPv6 literal off, lower case, and without the
 * trailing dots DNS ignores (`LOCALHOST..` is `localhost`).
 */
function normalizedHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.+$/, '')
}

/** Host names that always mean this machine (RFC 6761: localhost and every name under it). */
function isLocalHostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost')
}

/**
 * Why a URL's host is refused before any name is looked up, or undefined when it may be looked up:
 * a name that always means this machine, or a forbidden address written as the host. The one check
 * of both subscribe time and send time; names are checked again by their addresses (guardedLookup).
 */
export function refusedHost(hostname: string): string | undefined {
  const host = normalizedHost(hostname)
  if (isLocalHostName(host)) return `${host} is a local name`
  if (isIP(host) !== 0 && isForbiddenAddress(host)) return `${host} is a forbidden address`
  return undefined
}
