/**
 * A field's fixed_code: its stable machine code (client-facts "Smart tables"). The live product
 * answers a field's name in lower case ("attachments", "description"), and clients find a field
 * by it (the Node wrapper's uploadFile(tableCode, fieldCode, ...)), so it is made from the name
 * when the field is created and never changes afterwards (a rename keeps it).
 *
 * For names beyond one plain word the rule is a slug, so the code is the same on every database
 * whatever its collation: lower case; compatibility forms and accents folded (NFKD, combining
 * marks dropped: "Équipe" -> "equipe", "ﬁle" -> "file"); every run of characters that are not
 * letters or digits (spaces, punctuation, symbols, "_") becomes one "_", none at either end
 * ("Due date" -> "due_date", "Prix (€)" -> "prix"). Letters of any script stay ("Вложения" ->
 * "вложения"); a name with no letter or digit gives "field". Within a table a taken code gets a
 * suffix: "notes", "notes_2", "notes_3", ... At most 64 characters, the suffix included.
 */
export const FIXED_CODE_LENGTH = 64
const FALLBACK = 'field'

/** The code a field named `name` gets when no other field of its table has it. */
export function fixedCodeBase(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
  return slug || FALLBACK
}

/** The `attempt`-th candidate for `base` (1: the base itself, n: base_n), cut to fit the column. */
export function fixedCodeCandidate(base: string, attempt: number): string {
  const suffix = attempt <= 1 ? '' : `_${attempt}`
  // Cut by code points so a surrogate pair is never split; no "_" left dangling at the cut.
  const kept = Array.from(base)
    .slice(0, FIXED_CODE_LENGTH - suffix.length)
    .join('')
    .replace(/_+$/, '')
  return (kept || FALLBACK) + suffix
}
