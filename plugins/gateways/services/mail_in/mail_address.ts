import gatewaysConfig from '../../config.js'

/**
 * A book's e-mail address is `<b_c>.<b_o>@<MAIL_DOMAIN>`: the book code, a
 * dot, the owner's user code (b_o as the API names it). Only what every mail
 * system carries unchanged goes in an address: ASCII letters, digits, `_`,
 * `-`, and single dots inside a code. Book codes may hold more (`@`, `+`,
 * accents); such a book has no address.
 */
const ADDRESS_CODE = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/

/** RFC 5321: a local part is at most 64 octets. */
const MAX_LOCAL_PART = 64

export interface BookCodes {
  b_o: string
  b_c: string
}

/**
 * The address mail to the book goes to (replies to its copies too), or null
 * when MAIL_DOMAIN is unset or a code holds characters an address cannot
 * carry. Since both codes may hold dots, the address is read back by trying
 * every dot (see bookPairsOf); two books that both fit one address make it
 * ambiguous, and mail to it is refused.
 */
export function bookAddress(book: BookCodes, domain = gatewaysConfig.mailIn.domain): string | null {
  if (!domain) return null
  if (!ADDRESS_CODE.test(book.b_c) || !ADDRESS_CODE.test(book.b_o)) return null
  const local = `${book.b_c}.${book.b_o}`
  if (local.length > MAX_LOCAL_PART) return null
  return `${local}@${domain}`
}

/**
 * The (b_o, b_c) pairs an address may name, one per dot of its local part,
 * when it is at the domain (compared without case) and its local part has
 * the form bookAddress writes; an empty list otherwise. `a.b.c` may be the
 * book `a` of `b.c` or the book `a.b` of `c`.
 */
export function bookPairsOf(address: string, domain = gatewaysConfig.mailIn.domain): BookCodes[] {
  if (!domain) return []
  const at = address.lastIndexOf('@')
  if (at < 1) return []
  if (address.slice(at + 1).toLowerCase() !== domain.toLowerCase()) return []
  const local = address.slice(0, at)
  if (local.length > MAX_LOCAL_PART || !ADDRESS_CODE.test(local)) return []
  const pairs: BookCodes[] = []
  for (let dot = local.indexOf('.'); dot !== -1; dot = local.indexOf('.', dot + 1)) {
    pairs.push({ b_c: local.slice(0, dot), b_o: local.slice(dot + 1) })
  }
  return pairs
}

/** Whether an address is at the book addresses' domain (any local part). */
export function isAtMailDomain(address: string, domain = gatewaysConfig.mailIn.domain) {
  if (!domain) return false
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase() === domain.toLowerCase()
}
