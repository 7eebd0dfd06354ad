import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import emitter from '@adonisjs/core/services/emitter'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { OutboxService } from '#core/outbox/outbox_service'
import { AuditLog, auditActorOf } from '#core/audit/audit_log'
import { StampService } from '#core/services/stamp_service'
import { DEFAULT_RIGHTS, UserService } from '#core/services/user_service'
import type User from '#models/user'
import { TABLES, type MemberRow } from '../models/records.js'
import { RIGHT_ADMIN, RIGHT_LABELS, RIGHT_READWRITE, isValidRight } from '../rights.js'
import type { MemberChange } from '../events.js'
import { BookAccessService, type BookRef } from './book_access_service.js'
import { AddressInvitationService, invitationAddressOf } from './address_invitation_service.js'
import '../events.js'

export interface MemberResult {
  book: BookRef
  u_c: string
  invite: 'sent' | 'accepted'
  right: number
  del: boolean
}

/** inviteMember's answer for an address with no account: the link was sent, the invitation waits. */
export interface PendingInvitationResult {
  book: BookRef
  pending: true
  kind: 'email' | 'phone'
  right: number
}

/**
 * Membership: invitations and their states, rights, leaving. A member row is
 * never deleted: declined, removed and left members keep it with del true, so
 * that the user's next getAllBooks delta shows the book as gone.
 *
 *   (none) --inviteMember--> sent --acceptInvitation--> accepted
 *                             |--declineInvitation--> del
 *   sent/accepted --removeMember / leaveBook--> del --inviteMember--> sent
 */
@inject()
export class MemberService {
  constructor(
    private stamps: StampService,
    private access: BookAccessService,
    private users: UserService,
    private outbox: OutboxService,
    private addressInvitations: AddressInvitationService,
    private audit: AuditLog
  ) {}

  private async findMember(bookId: number, userId: number, trx?: TransactionClientContract) {
    return ((await (trx ?? db)
      .from(TABLES.members)
      .where('book_id', bookId)
      .where('user_id', userId)
      .first()) ?? null) as MemberRow | null
  }

  private async targetUser(login: string): Promise<User> {
    const user = await this.users.findByLogin(login)
    if (!user) throw rpcError('NOT_FOUND', `No user with the code, e-mail or phone ${login}`)
    return user
  }

  /**
   * inviteMember (extension): RIGHT_ADMIN; the invitee is found by code,
   * e-mail or phone. An e-mail or phone no account has is invited by address:
   * a pending invitation whose link the gateways plugin sends.
   */
  async invite(
    actor: Actor,
    b_o: string,
    b_c: string,
    login: string,
    right = RIGHT_READWRITE
  ): Promise<MemberResult | PendingInvitationResult> {
    const book = await this.access.resolveFor(actor, b_o, b_c, 'admin')
    if ({ ...DEFAULT_RIGHTS, ...actor.user.rights }.inviteMembers !== true) {
      throw rpcError('FORBIDDEN', 'You may not invite members')
    }
    if (!isValidRight(right))
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter right: 1 to 4', { field: 'right' })
    const invitee = await this.users.findByLogin(login)
    if (!invitee) {
      const address = invitationAddressOf(login)
      if (!address) throw rpcError('NOT_FOUND', `No user with the code, e-mail or phone ${login}`)
      return this.stamps.write(async ({ trx, stamp, afterCommit }) => {
        await this.addressInvitations.store(
          trx,
          stamp,
          afterCommit,
          book,
          address,
          right,
          actor.user.id
        )
        return { book, pending: true as const, kind: address.kind, right }
      })
    }
    return this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const existing = await this.findMember(book.id, invitee.id, trx)
      if (existing && !existing.del && existing.invite === 'accepted') {
        throw rpcError('CONFLICT', `${invitee.code} is already a member of this book`)
      }
      await this.addInvitation(trx, stamp, afterCommit, book, invitee, existing, right, {
        actorId: actor.user.id,
        onBehalfOf: actor.onBehalf ? actor.principal.id : null,
      })
      return { book, u_c: invitee.code, invite: 'sent' as const, right, del: false }
    })
  }

  /**
   * A new account's pending invitations by address (its e-mail or phone)
   * become invitations as inviteMember makes them, in one transaction.
   * Called on `core:user_created`; a book where the user already is a live
   * member keeps that membership.
   */
  async adoptAddressInvitations(user: User) {
    const addresses = [user.email, user.phone].filter((value): value is string => !!value)
    if (addresses.length === 0) return
    await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      for (const row of await this.addressInvitations.take(trx, addresses)) {
        const book = await this.access.findById(Number(row.book_id))
        if (!book) continue
        const existing = await this.findMember(book.id, user.id, trx)
        if (existing && !existing.del) continue
        await this.addInvitation(trx, stamp, afterCommit, book, user, existing, Number(row.right), {
          actorId: Number(row.invited_by),
          onBehalfOf: null,
        })
      }
    })
  }

  /** Writes a 'sent' membership and what goes with it (contacts, the invitee's push, the event). */
  private async addInvitation(
    trx: TransactionClientContract,
    stamp: number,
    afterCommit: (callback: () => unknown) => void,
    book: BookRef,
    invitee: User,
    existing: MemberRow | null,
    right: number,
    by: { actorId: number; onBehalfOf: number | null }
  ) {
    const now = new Date()
    const fields = {
      invite: 'sent',
      right,
      invited_by: by.actorId,
      del: false,
      sstamp: stamp,
      updated_at: now,
    }
    if (existing) {
      await trx.from(TABLES.members).where('id', existing.id).update(fields)
    } else {
      await trx.table(TABLES.members).insert({
        ...fields,
        book_id: book.id,
        user_id: invitee.id,
        user_prefs: '{}',
        favorite: false,
        sort_order: 0,
        last_msg_read: 0,
        nb_not_read: 0,
        created_at: now,
      })
    }
    await this.touchBook(trx, book.id, stamp)
    await linkContacts(trx, stamp, by.actorId, [invitee.id], false)
    // The invitee's push notification (gateways), written with the invitation.
    if (this.outbox.wants('books:member_invited', { bookId: book.id }))
      await this.outbox.stage(
        trx,
        'books:member_invited',
        {
          bookId: book.id,
          b_o: book.b_o,
          b_c: book.b_c,
          userId: invitee.id,
          right,
          actorId: by.actorId,
          onBehalfOf: by.onBehalfOf,
          stamp,
        },
        afterCommit
      )
    afterCommit(() => this.emit(book, invitee, 'invited', 'sent', right, false, by.actorId))
  }

  /** acceptInvitation (extension and socket system message): sent -> accepted. */
  async accept(actor: Actor, b_o: string, b_c: string): Promise<MemberResult> {
    const { book, member } = await this.ownMembership(actor, b_o, b_c)
    if (member.invite === 'accepted') return this.result(book, actor.user, member)
    return this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      // Messages before joining count as read: the unread count starts now.
      const newest = await trx
        .from(TABLES.messages)
        .where('book_id', book.id)
        .max('smid as smid')
        .first()
      await trx
        .from(TABLES.members)
        .where('id', member.id)
        .where('invite', 'sent')
        .update({
          invite: 'accepted',
          last_msg_read: Number(newest?.smid ?? 0),
          nb_not_read: 0,
          sstamp: stamp,
          updated_at: new Date(),
        })
      await this.touchBook(trx, book.id, stamp)
      const others = await trx
        .from(TABLES.members)
        .where('book_id', book.id)
        .where('invite', 'accepted')
        .where('del', false)
        .whereNot('user_id', actor.user.id)
        .select('user_id')
      await linkContacts(
        trx,
        stamp,
        actor.user.id,
        others.map((row) => Number(row.user_id)),
        true
      )
      afterCommit(() =>
        this.emit(
          book,
          actor.user,
          'accepted',
          'accepted',
          Number(member.right),
          false,
          actor.user.id
        )
      )
      return {
        book,
        u_c: actor.user.code,
        invite: 'accepted' as const,
        right: Number(member.right),
        del: false,
      }
    })
  }

  /** declineInvitation (extension): a pending invitation is dropped. */
  async decline(actor: Actor, b_o: string, b_c: string): Promise<MemberResult> {
    const { book, member } = await this.ownMembership(actor, b_o, b_c)
    if (member.invite !== 'sent')
      throw rpcError('CONFLICT', 'The invitation was already accepted: use leaveBook')
    return this.drop(actor, book, actor.user, member, 'declined')
  }

  /** leaveBook (extension): any member but the owner. */
  async leave(actor: Actor, b_o: string, b_c: string): Promise<MemberResult> {
    const { book, member } = await this.ownMembership(actor, b_o, b_c)
    if (book.ownerId === actor.user.id)
      throw rpcError('FORBIDDEN', 'The owner cannot leave their book')
    return this.drop(actor, book, actor.user, member, 'left')
  }

  /**
   * removeMember (extension): RIGHT_ADMIN; also cancels an invitation. The
   * owner cannot be removed, and only the owner removes another administrator.
   */
  async remove(actor: Actor, b_o: string, b_c: string, login: string): Promise<MemberResult> {
    const book = await this.access.resolveFor(actor, b_o, b_c, 'admin')
    const { user, member } = await this.liveMember(book, login)
    this.assertManageable(actor, book, user, member)
    return this.drop(actor, book, user, member, 'removed')
  }

  /** setMemberRight (extension): RIGHT_ADMIN; 1 to 4 (4 makes a co-administrator). */
  async setRight(
    actor: Actor,
    b_o: string,
    b_c: string,
    login: string,
    right: number
  ): Promise<MemberResult> {
    if (!isValidRight(right))
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter right: 1 to 4', { field: 'right' })
    const book = await this.access.resolveFor(actor, b_o, b_c, 'admin')
    const { user, member } = await this.liveMember(book, login)
    this.assertManageable(actor, book, user, member)
    if (Number(member.right) === right) return this.result(book, user, member)
    return this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      await trx
        .from(TABLES.members)
        .where('id', member.id)
        .update({ right, sstamp: stamp, updated_at: new Date() })
      await this.touchBook(trx, book.id, stamp)
      await this.audit.record(
        {
          actor: auditActorOf(actor),
          kind: 'book.member_right_changed',
          target: { type: 'book', id: book.id, label: `${book.b_o}/${book.b_c}` },
          changes: {
            [`right of ${user.code}`]: {
              from: RIGHT_LABELS[Number(member.right)] ?? Number(member.right),
              to: RIGHT_LABELS[right] ?? right,
            },
          },
        },
        trx
      )
      afterCommit(() => this.emit(book, user, 'right', member.invite, right, false, actor.user.id))
      return { book, u_c: user.code, invite: member.invite, right, del: false }
    })
  }

  private assertManageable(actor: Actor, book: BookRef, user: User, member: MemberRow) {
    if (user.id === book.ownerId)
      throw rpcError('FORBIDDEN', "The owner's membership cannot be changed")
    if (
      Number(member.right) >= RIGHT_ADMIN &&
      actor.user.id !== book.ownerId &&
      user.id !== actor.user.id
    ) {
      throw rpcError('FORBIDDEN', 'Only the owner changes another administrator')
    }
  }

  private async liveMember(book: BookRef, login: string) {
    const user = await this.targetUser(login)
    const member = await this.findMember(book.id, user.id)
    if (!member || member.del)
      throw rpcError('NOT_FOUND', `${user.code} is not a member of this book`)
    return { user, member }
  }

  /** The actor's own live membership (invited or accepted) of the book, or NOT_FOUND. */
  private async ownMembership(actor: Actor, b_o: string, b_c: string) {
    const book = await this.access.resolve(b_o, b_c)
    if (!book) {
      if (!this.access.allows(actor, { b_o, b_c })) {
        throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
      }
      throw rpcError('NOT_FOUND', 'Book not found')
    }
    this.access.assertRestrictions(actor, book, 'write')
    const member = await this.findMember(book.id, actor.user.id)
    if (!member || member.del) throw rpcError('NOT_FOUND', 'Book not found')
    return { book, member }
  }

  private async drop(
    actor: Actor,
    book: BookRef,
    user: User,
    member: MemberRow,
    change: MemberChange
  ) {
    return this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      await trx
        .from(TABLES.members)
        .where('id', member.id)
        .update({ del: true, sstamp: stamp, updated_at: new Date() })
      await this.touchBook(trx, book.id, stamp)
      afterCommit(() =>
        this.emit(book, user, change, member.invite, Number(member.right), true, actor.user.id)
      )
      return { book, u_c: user.code, invite: member.invite, right: Number(member.right), del: true }
    })
  }

  /** The member list is part of every member's view of the book: their next delta must include it. */
  private async touchBook(trx: TransactionClientContract, bookId: number, stamp: number) {
    await trx
      .from(TABLES.books)
      .where('id', bookId)
      .update({ sstamp: stamp, updated_at: new Date() })
  }

  private result(book: BookRef, user: User, member: MemberRow): MemberResult {
    return {
      book,
      u_c: user.code,
      invite: member.invite,
      right: Number(member.right),
      del: Boolean(member.del),
    }
  }

  private emit(
    book: BookRef,
    user: User,
    change: MemberChange,
    invite: 'sent' | 'accepted',
    right: number,
    del: boolean,
    actorId: number
  ) {
    return emitter.emit('books:member_changed', {
      book,
      userId: user.id,
      u_c: user.code,
      change,
      invite,
      right,
      del,
      actorId,
    })
  }
}

/**
 * Makes `userId` and each of `others` contacts of one another. A confirmed
 * link (both accepted a shared book) stays confirmed; contacts are kept when
 * a book is left, like an address book.
 */
export async function linkContacts(
  trx: TransactionClientContract,
  stamp: number,
  userId: number,
  others: number[],
  confirmed: boolean
) {
  const pairs = others
    .filter((other) => other !== userId)
    .flatMap((other) => [
      [userId, other],
      [other, userId],
    ])
  for (const [from, to] of pairs) {
    const existing = await trx
      .from(TABLES.contacts)
      .where('user_id', from)
      .where('contact_id', to)
      .first()
    if (!existing) {
      // A concurrent invitation may link the same pair: the first insert wins.
      await trx
        .knexQuery()
        .table(TABLES.contacts)
        .insert({ user_id: from, contact_id: to, is_confirmed: confirmed, sstamp: stamp })
        .onConflict(['user_id', 'contact_id'])
        .ignore()
    } else if (confirmed && !existing.is_confirmed) {
      await trx
        .from(TABLES.contacts)
        .where('user_id', from)
        .where('contact_id', to)
        .update({ is_confirmed: true, sstamp: stamp })
    }
  }
}
