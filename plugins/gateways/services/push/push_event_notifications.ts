import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { OutboxContributor } from '#core/outbox/types'
import type { MemberInviting } from '#plugins/books/events'
import { RIGHT_ADMIN } from '#plugins/books/rights'
import type { CommentCreating } from '#plugins/tables/events'
import { rowTableName } from '#plugins/tables/lib/field_types'
import { bookCollapseKey, type PushDeliveryService } from './push_delivery_service.js'

/** 'First Last', else the code: how a notification names the person who acted. */
async function displayName(client: QueryClientContract, userId: number) {
  const user = await client
    .from('users')
    .where('id', userId)
    .select('code', 'first_name', 'last_name')
    .first()
  if (!user) return null
  const name = `${user.first_name ?? ''} ${user.last_name ?? ''}`.trim()
  return { code: String(user.code), name: name || String(user.code) }
}

const actorsOf = (event: { actorId: number; onBehalfOf: number | null }) =>
  new Set([event.actorId, event.onBehalfOf ?? 0])

/**
 * Push notifications of invitations and cell comments (issue 19 item 4),
 * contributed to the books' and tables' in-transaction topics: written with
 * the invitation or the comment, through PushDeliveryService.entriesForUsers
 * (devices, the book's userPrefs, confidentiality). Never to whoever acted.
 */
export class PushEventNotifications {
  constructor(private push: PushDeliveryService) {}

  /** `books:member_invited`: the invited user's devices. */
  invitationContributor(): OutboxContributor<MemberInviting> {
    return {
      wants: () => this.push.enabled(),
      entries: async (event, client) => {
        if (actorsOf(event).has(event.userId)) return []
        const [book, inviter] = await Promise.all([
          this.push.bookContext(client, event.bookId),
          displayName(client, event.actorId),
        ])
        if (!book || !inviter) return []
        return this.push.entriesForUsers(client, {
          userIds: [event.userId],
          bookId: event.bookId,
          title: book.title,
          body: `${inviter.name} invites you to ${book.title}`,
          data: { type: 'invitation', b_o: event.b_o, b_c: event.b_c, u_c: inviter.code },
          collapseKey: bookCollapseKey(event.bookId),
          eventType: 'invitation.created',
          idempotencyKey: `invitation:${event.bookId}:${event.userId}:${event.stamp}`,
        })
      },
    }
  }

  /**
   * `tables:comment_created`: the people of that cell's conversation — the
   * row's author (created_by) and everyone who commented on the cell
   * before — who are still accepted members able to see the table (their
   * right reaches its rights.select, or they administer the book).
   */
  commentContributor(): OutboxContributor<CommentCreating> {
    return {
      wants: () => this.push.enabled(),
      entries: async (event, client) => {
        const userIds = await this.commentAudience(client, event)
        if (userIds.length === 0) return []
        const [book, author] = await Promise.all([
          this.push.bookContext(client, event.bookId),
          displayName(client, event.actorId),
        ])
        if (!book || !author) return []
        return this.push.entriesForUsers(client, {
          userIds,
          bookId: event.bookId,
          title: `${book.title} · ${event.catName}`,
          body: `${author.name}: ${event.text}`,
          data: {
            type: 'comment',
            b_o: event.b_o,
            b_c: event.b_c,
            catId: String(event.categoryId),
            fieldId: String(event.fieldId),
            rowId: String(event.rowId),
            commentId: String(event.commentId),
            u_c: author.code,
          },
          collapseKey: bookCollapseKey(event.bookId),
          eventType: 'comment.created',
          idempotencyKey: `comment:${event.commentId}`,
        })
      },
    }
  }

  private async commentAudience(client: QueryClientContract, event: CommentCreating) {
    const [earlier, row, table] = await Promise.all([
      client
        .from('table_comments')
        .where('category_id', event.categoryId)
        .where('field_id', event.fieldId)
        .where('row_id', event.rowId)
        .whereNot('id', event.commentId)
        .whereNotNull('user_id')
        .distinct('user_id'),
      client
        .from(rowTableName(event.categoryId))
        .where('id', event.rowId)
        .select('created_by')
        .first(),
      client.from('table_categories').where('id', event.categoryId).select('rights_select').first(),
    ])
    const commenters = earlier.map((comment) => Number(comment.user_id))
    const rowAuthor = row?.created_by ? String(row.created_by) : null
    if (!table || (commenters.length === 0 && !rowAuthor)) return []
    const seeing = Math.min(Number(table.rights_select), RIGHT_ADMIN)
    const members = await client
      .from('book_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.book_id', event.bookId)
      .where('m.invite', 'accepted')
      .where('m.del', false)
      .where('m.right', '>=', seeing)
      .where((query) => {
        if (commenters.length) query.whereIn('m.user_id', commenters)
        if (rowAuthor) query.orWhere('u.code', rowAuthor)
      })
      .select('m.user_id')
    const actors = actorsOf(event)
    return members.map((member) => Number(member.user_id)).filter((id) => !actors.has(id))
  }
}
