import { inject } from '@adonisjs/core'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { OutboxContributor, OutboxEntry } from '#core/outbox/types'
import type { AddressInviting } from '#plugins/books/events'
import {
  OWNER_PREF_DEFAULTS,
  OWNER_PREF_KINDS,
  parseJson,
  typedPrefs,
} from '#plugins/books/models/prefs'
import mediaConfig from '#plugins/media/config'
import { MailOutService } from '../mail_out/mail_out_service.js'
import { SmsOutboxService } from '../sms_outbox_service.js'
import { displayName, smsNumber } from '../copies/recipients.js'

/** The invitation link: the instance's public origin (MEDIA_PUBLIC_URL, as fileUpload's URLs). */
export const invitationLink = (token: string) =>
  `${mediaConfig.publicUrl.replace(/\/+$/, '')}/invite/${encodeURIComponent(token)}`

/**
 * Invitations to an address with no account (issue 19 item 6): the link
 * `<public URL>/invite/<token>` by e-mail (the outbox's `mail` channel) or
 * SMS (the SMS gateways' queue), written in the invitation's own transaction
 * (books' in-transaction topic `books:address_invited`), sent after commit.
 * Nothing is written when the address cannot be reached (SMTP not
 * configured, a number an SMS cannot reach): the invitation still waits for
 * the account. The token travels only inside the link (not in the key, the
 * subject, or any log line).
 */
@inject()
export class AddressInvitationLinks {
  constructor(
    private mailOut: MailOutService,
    private sms: SmsOutboxService
  ) {}

  /** The contribution to books' in-transaction topic. */
  contributor(): OutboxContributor<AddressInviting> {
    return {
      wants: () => true,
      entries: (event, client, afterCommit) => this.linksOf(event, client, afterCommit),
    }
  }

  async linksOf(
    event: AddressInviting,
    client: QueryClientContract,
    afterCommit: (callback: () => unknown) => void
  ): Promise<OutboxEntry[]> {
    const phone = event.kind === 'phone' ? smsNumber(event.address) : null
    if (event.kind === 'email' ? !this.mailOut.enabled : !phone) return []
    const book = await client.from('books').where('id', event.bookId).select('owner_prefs').first()
    const inviter = await client
      .from('users')
      .where('id', event.actorId)
      .select('code', 'first_name', 'last_name')
      .first()
    const title = String(
      typedPrefs(OWNER_PREF_KINDS, OWNER_PREF_DEFAULTS, parseJson(book?.owner_prefs, null)).title ||
        event.b_c
    )
    const who = inviter ? displayName(inviter) : event.b_o
    const link = invitationLink(event.token)
    // One delivery per invitation sent: a refreshed invitation is a new stamp.
    const idempotencyKey = `invitation:${event.invitationId}:${event.stamp}`
    if (phone) {
      await this.sms.enqueue(
        client,
        {
          to: phone,
          text: `${who} invites you to the book ${title}: ${link}`,
          bookId: event.bookId,
          kind: 'invitation',
          idempotencyKey,
        },
        afterCommit
      )
      return []
    }
    const days = Math.max(1, Math.round((event.expiresAt - Date.now()) / 86_400_000))
    return [
      this.mailOut.entry({
        to: event.address,
        subject: `${who} invites you to the book ${title}`,
        text: [
          `${who} invites you to the book ${title}.`,
          '',
          `Open this link to see the invitation and how to join (valid ${days} days):`,
          link,
        ].join('\n'),
        headers: { 'Auto-Submitted': 'auto-generated' },
        idempotencyKey,
        eventType: 'invitation',
      }),
    ]
  }
}
