import type { SessionRestrictions } from '#models/api_session'

/** createSesskey's `restrictions` object: the exact wire names real clients read (docs/spec/client-facts.md, "Keys"). */
export function serializeRestrictions(restrictions: SessionRestrictions) {
  return {
    carnet_code: restrictions.carnet_code ?? null,
    carnet_owner: restrictions.carnet_owner ?? null,
    readonly: Boolean(restrictions.readonly),
    hideTables: Boolean(restrictions.hideTables),
    hideMessages: Boolean(restrictions.hideMessages),
    hideEvents: Boolean(restrictions.hideEvents),
    internal: Boolean(restrictions.internal),
  }
}
