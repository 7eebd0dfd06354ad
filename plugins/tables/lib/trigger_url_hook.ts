import type { Actor } from '#core/rpc/base_operation'

/**
 * What updateTable's `triggerUpdateUrl` does beyond storing the URL on the
 * category (which getBookTables answers). The tables plugin does not know
 * who delivers table webhooks: the webhooks plugin (which depends on tables)
 * installs its handler at boot, making or updating the table's row webhook
 * for that URL. Without a handler (webhooks not loaded) the URL is only
 * stored. A handler that throws (a refused URL) fails updateTable before
 * anything is stored.
 */
export type TriggerUrlHandler = (actor: Actor, catId: number, url: string) => Promise<void>

let handler: TriggerUrlHandler | null = null

export const triggerUrlHook = {
  install(next: TriggerUrlHandler) {
    handler = next
  },
  async apply(actor: Actor, catId: number, url: string) {
    if (handler) await handler(actor, catId, url)
  },
}

/**
 * api.php's bypassUrlTrigger when the client sends none: true, as in the live
 * product (client-facts: automations fire only when `false` is sent). The
 * webhooks plugin sets it at boot from WEBHOOKS_API_DEFAULT_BYPASS.
 */
export const urlTriggerDefaults = { apiBypass: true }
