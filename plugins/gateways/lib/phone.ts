import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max'

/**
 * A phone number in E.164 (+33612345678), or null when `raw` is not a valid
 * number. A number without its country code is read in `region` (none: only
 * international numbers are understood); a leading 00 is the international prefix.
 */
export function toE164(raw: string | null | undefined, region?: CountryCode): string | null {
  const text = String(raw ?? '').trim()
  if (text === '' || text.length > 40) return null
  const international = text.replace(/^00(?=\d)/, '+')
  const phone = parsePhoneNumberFromString(international, region ? { defaultCountry: region } : {})
  return phone && phone.isValid() ? phone.number : null
}

/**
 * The ways a user may have stored an E.164 number, as UserService compares
 * them (digits and a leading +): international, with 00, without +, and the
 * national forms. Candidates only: each match is checked again with toE164.
 */
export function phoneForms(e164: string): string[] {
  const phone = parsePhoneNumberFromString(e164)
  const digits = e164.replace(/^\+/, '')
  const forms = [e164, digits, `00${digits}`]
  if (phone) forms.push(phone.formatNational().replace(/[^\d+]/g, ''), String(phone.nationalNumber))
  return [...new Set(forms)]
}
