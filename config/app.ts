import { BlockList, isIP } from 'node:net'
import app from '@adonisjs/core/services/app'
import { Secret } from '@adonisjs/core/helpers'
import { defineConfig } from '@adonisjs/core/http'
import { resolveAppKey } from '#config/quire'
import env from '#start/env'

export const appKey = new Secret(resolveAppKey())

/** proxy-addr's named ranges, accepted in TRUSTED_PROXIES. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

/**
 * TRUSTED_PROXIES: the proxies whose X-Forwarded-Host / -Proto / -For the
 * server believes (comma-separated addresses, CIDR ranges, or loopback,
 * linklocal, uniquelocal). Unset, empty or `none`: no one, not even loopback
 * (AdonisJS's own default trusts loopback), so a client cannot make the
 * server build its URLs (tus Location) on a host of its choosing. A wrong
 * entry stops the boot rather than trusting too much or too little.
 */
export function trustedProxies(list: string | undefined): (address: string) => boolean {
  const entries = String(list ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && entry !== 'none')
  if (entries.length === 0) return () => false
  const trusted = new BlockList()
  for (const entry of entries.flatMap((name) => NAMED_RANGES[name] ?? [name])) {
    const [address, prefix, ...rest] = entry.split('/')
    const family = isIP(address)
    // A prefix past the family's bits would reach BlockList as a RangeError naming no variable.
    const bits = family === 6 ? 128 : 32
    const badPrefix = prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)
    if (family === 0 || badPrefix || rest.length > 0)
      throw new Error(`TRUSTED_PROXIES: not an address or range: ${entry}`)
    const type = family === 6 ? 'ipv6' : 'ipv4'
    if (prefix === undefined) trusted.addAddress(address, type)
    else trusted.addSubnet(address, Number(prefix), type)
  }
  return (address) => {
    // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
    const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
    const family = isIP(plain)
    return family !== 0 && trusted.check(plain, family === 6 ? 'ipv6' : 'ipv4')
  }
}

export const http = defineConfig({
  generateRequestId: false,
  allowMethodSpoofing: false,
  useAsyncLocalStorage: false,
  trustProxy: trustedProxies(env.get('TRUSTED_PROXIES')),
  cookie: {
    domain: '',
    path: '/',
    maxAge: '2h',
    httpOnly: true,
    secure: app.inProduction,
    sameSite: 'lax',
  },
})
