import vine from '@vinejs/vine'

/**
 * Parameter types as real clients send them. Every leaf arrives as a string;
 * an empty string means "not given" for optional numbers and booleans (PHP
 * clients send `restrictions=` or `sstamp=`).
 */
const emptyAsMissing = (value: unknown) => (value === '' ? undefined : value)

/** true/false, 1/0, TRUE/FALSE, on/off, in any case. */
export const flag = () =>
  vine.boolean().parse((value) => {
    const normalized = typeof value === 'string' ? value.trim().toLowerCase() : value
    if (normalized === 'off') return false
    return emptyAsMissing(normalized)
  })

/** An integer given as digits (or a JSON number). */
export const int = () => vine.number().withoutDecimals().parse(emptyAsMissing)

/** A stamp or id: a non-negative integer. */
export const stamp = () => vine.number().withoutDecimals().min(0).parse(emptyAsMissing)

/** A required, non-blank string. */
export const text = () => vine.string().trim().minLength(1)
