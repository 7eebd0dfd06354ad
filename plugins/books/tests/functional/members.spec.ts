import { test } from '@japa/runner'
import emitter from '@adonisjs/core/services/emitter'
import { readQuery } from '#core/native_sql'
import {
  book,
  client,
  expectNok,
  pick,
  send,
  sessionOf,
  share,
  sharedBook,
} from '../helpers/books.js'

const listing = async (
  who: { call: (p: Record<string, unknown>) => Promise<any> },
  sstamp?: number
) =>
  pick(
    await who.call({ req: 'getAllBooks', ...(sstamp === undefined ? {} : { sstamp }) }),
    'allBooks'
  )

test.group('invitations', () => {
  test('sent -> accepted: the invitee sees the book, reads messages only once accepted', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    await send(alice, target, 'before the invitation')

    const invited = await alice.call({ req: 'inviteMember', ...target, member: bob.code, right: 2 })
    assert.deepEqual(invited.member, { u_c: bob.code, invite: 'sent', right: 2, del: false })

    const pending = pick(await listing(bob), 'books')[0]
    assert.strictEqual(pending.accepted, false)
    assert.strictEqual(pending.invited, true)
    assert.isNull(pending.lastMsg)
    assert.deepEqual(
      pending.members.map((member: any) => [member.u_c, member.invite, member.apiRight]),
      [
        [alice.code, 'accepted', '1'],
        [bob.code, 'sent', '0'],
      ]
    )
    expectNok(assert, await bob.call({ req: 'getBookMessages', ...target }), 'NOT_FOUND')
    expectNok(assert, await bob.call({ req: 'sendMsg', ...target, msg: 'too early' }), 'NOT_FOUND')

    const accepted = await bob.call({ req: 'acceptInvitation', ...target })
    assert.strictEqual(accepted.book.accepted, true)
    // Messages from before joining do not count as unread.
    assert.strictEqual(accepted.book.nbNotRead, 0)
    assert.lengthOf(pick(await bob.call({ req: 'getBookMessages', ...target }), 'bookMessages'), 1)
    assert.equal(pick(await bob.call({ req: 'acceptInvitation', ...target }), 'status'), 'ok')
  })

  test('sent -> declined: the book leaves the list, and comes back with del true in a delta', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    await alice.call({ req: 'inviteMember', ...target, member: bob.code })
    const since = pick(await bob.call({ req: 'getAllBooks' }), 'sstamp')
    assert.equal(pick(await bob.call({ req: 'declineInvitation', ...target }), 'status'), 'ok')
    assert.deepEqual(pick(await listing(bob), 'books'), [])
    const delta = await listing(bob, since)
    assert.deepEqual(
      delta.books.map((entry: any) => [entry.b_c, entry.del]),
      [[target.b_c, true]]
    )
    expectNok(assert, await bob.call({ req: 'acceptInvitation', ...target }), 'NOT_FOUND')
    expectNok(assert, await bob.call({ req: 'declineInvitation', ...target }), 'NOT_FOUND')
    // The owner's member list no longer shows bob.
    const owners = pick(await alice.call({ req: 'getBookInfo', ...target }), 'book')
    assert.deepEqual(
      owners.members.map((member: any) => member.u_c),
      [alice.code]
    )
  })

  test('an accepted invitation cannot be declined; accepting needs an invitation', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const eve = await client()
    const target = await book(alice)
    await share(alice, target, bob)
    expectNok(assert, await bob.call({ req: 'declineInvitation', ...target }), 'CONFLICT')
    expectNok(assert, await eve.call({ req: 'acceptInvitation', ...target }), 'NOT_FOUND')
  })

  test('invitations by code, e-mail and phone; unknown logins and members twice are refused', async ({
    assert,
  }) => {
    const alice = await client()
    const byMail = await client()
    const byPhone = await client()
    const target = await book(alice)
    assert.equal(
      pick(
        await alice.call({ req: 'inviteMember', ...target, member: byMail.user.email }),
        'member.u_c'
      ),
      byMail.code
    )
    assert.equal(
      pick(
        await alice.call({ req: 'inviteMember', ...target, login: byPhone.user.phone }),
        'member.u_c'
      ),
      byPhone.code
    )
    expectNok(
      assert,
      // A code no user has (an address no account has is invited by address: address_invitations.spec).
      await alice.call({ req: 'inviteMember', ...target, member: 'nobody' }),
      'NOT_FOUND'
    )
    expectNok(assert, await alice.call({ req: 'inviteMember', ...target }), 'MISSING_PARAMETER')
    expectNok(
      assert,
      await alice.call({ req: 'inviteMember', ...target, member: alice.code }),
      'CONFLICT'
    )
    expectNok(
      assert,
      await alice.call({ req: 'inviteMember', ...target, member: byMail.code, right: 7 }),
      'INVALID_PARAMETER'
    )
    // A second invitation before acceptance is not an error: it updates the right.
    const again = await alice.call({
      req: 'inviteMember',
      ...target,
      member: byMail.code,
      right: 1,
    })
    assert.deepEqual(again.member, { u_c: byMail.code, invite: 'sent', right: 1, del: false })
    await byMail.call({ req: 'acceptInvitation', ...target })
    expectNok(
      assert,
      await alice.call({ req: 'inviteMember', ...target, member: byMail.code }),
      'CONFLICT'
    )
  })

  test('only administrators invite', async ({ assert }) => {
    const {
      members: [bob],
      target,
    } = await sharedBook(3)
    const carol = await client()
    expectNok(
      assert,
      await bob.call({ req: 'inviteMember', ...target, member: carol.code }),
      'FORBIDDEN'
    )
    expectNok(
      assert,
      await carol.call({ req: 'inviteMember', ...target, member: carol.code }),
      'NOT_FOUND'
    )
  })

  test('contacts: unconfirmed once invited, confirmed once the invitation is accepted', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    await alice.call({ req: 'inviteMember', ...target, member: bob.code })
    const before = await listing(alice)
    assert.deepEqual(
      before.contacts.map((contact: any) => [contact.u_c, contact.isConfirmed]),
      [[bob.code, false]]
    )
    const since = pick(await alice.call({ req: 'getAllBooks' }), 'sstamp')
    await bob.call({ req: 'acceptInvitation', ...target })
    const after = await listing(alice, since)
    assert.deepEqual(
      after.contacts.map((contact: any) => [contact.u_c, contact.isConfirmed]),
      [[bob.code, true]]
    )
    assert.strictEqual(after.nbContacts, 1)
    assert.deepEqual(
      pick(await listing(bob), 'contacts').map((contact: any) => contact.u_c),
      [alice.code]
    )
  })

  test('member_changed events are emitted after commit', async ({ assert, cleanup }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    // What a listener reads when the event arrives, on a connection of its own:
    // before the commit it would still see the previous state.
    const seen: [string, string | null][] = []
    cleanup(
      emitter.on('books:member_changed', async (data) => {
        if (data.userId !== bob.user.id) return
        const [row] = await readQuery(
          'SELECT invite FROM book_members WHERE book_id = ? AND user_id = ? AND del = ?',
          [data.book.id, data.userId, false]
        )
        seen.push([data.change, row?.invite ?? null])
      })
    )
    await share(alice, target, bob)
    assert.deepEqual(seen, [
      ['invited', 'sent'],
      ['accepted', 'accepted'],
    ])
  })
})

test.group('members: rights, removal, leaving', () => {
  test('setMemberRight: administrators set 1 to 4; the owner is fixed; only the owner changes an administrator', async ({
    assert,
  }) => {
    const {
      owner: alice,
      members: [bob, carol],
      target,
    } = await sharedBook(2, 2)

    const raised = await alice.call({
      req: 'setMemberRight',
      ...target,
      member: bob.code,
      right: 4,
    })
    assert.deepEqual(raised.member, { u_c: bob.code, invite: 'accepted', right: 4, del: false })
    expectNok(
      assert,
      await alice.call({ req: 'setMemberRight', ...target, member: bob.code, right: 0 }),
      'INVALID_PARAMETER'
    )
    expectNok(
      assert,
      await alice.call({ req: 'setMemberRight', ...target, member: bob.code, right: 5 }),
      'INVALID_PARAMETER'
    )
    expectNok(
      assert,
      await alice.call({ req: 'setMemberRight', ...target, member: bob.code }),
      'MISSING_PARAMETER'
    )
    expectNok(
      assert,
      await bob.call({ req: 'setMemberRight', ...target, member: alice.code, right: 1 }),
      'FORBIDDEN'
    )
    expectNok(
      assert,
      await carol.call({ req: 'setMemberRight', ...target, member: bob.code, right: 1 }),
      'FORBIDDEN'
    )
    // bob, an administrator, manages carol, but not another administrator.
    assert.equal(
      pick(
        await bob.call({ req: 'setMemberRight', ...target, member: carol.code, right: 4 }),
        'status'
      ),
      'ok'
    )
    expectNok(
      assert,
      await bob.call({ req: 'setMemberRight', ...target, member: carol.code, right: 1 }),
      'FORBIDDEN'
    )
    expectNok(
      assert,
      await alice.call({ req: 'setMemberRight', ...target, member: 'nobody', right: 1 }),
      'NOT_FOUND'
    )

    const members = pick(await alice.call({ req: 'getBookInfo', ...target }), 'book.members')
    assert.deepEqual(
      members.map((member: any) => [member.u_c, member.right]),
      [
        [alice.code, 4],
        [bob.code, 4],
        [carol.code, 4],
      ]
    )
  })

  test('removeMember: the member loses the book at once; the owner cannot be removed', async ({
    assert,
  }) => {
    const {
      owner: alice,
      members: [bob],
      target,
    } = await sharedBook(3)
    const carol = await client()
    await alice.call({ req: 'inviteMember', ...target, member: carol.code })
    expectNok(
      assert,
      await bob.call({ req: 'removeMember', ...target, member: carol.code }),
      'FORBIDDEN'
    )
    expectNok(
      assert,
      await alice.call({ req: 'removeMember', ...target, member: alice.code }),
      'FORBIDDEN'
    )

    const removed = await alice.call({ req: 'removeMember', ...target, member: bob.code })
    assert.deepEqual(removed.member, { u_c: bob.code, invite: 'accepted', right: 3, del: true })
    expectNok(assert, await bob.call({ req: 'getBookMessages', ...target }), 'NOT_FOUND')
    expectNok(assert, await bob.call({ req: 'getBookInfo', ...target }), 'NOT_FOUND')
    expectNok(
      assert,
      await alice.call({ req: 'removeMember', ...target, member: bob.code }),
      'NOT_FOUND'
    )
    // Cancelling an invitation.
    assert.equal(
      pick(await alice.call({ req: 'removeMember', ...target, member: carol.code }), 'status'),
      'ok'
    )
    expectNok(assert, await carol.call({ req: 'acceptInvitation', ...target }), 'NOT_FOUND')

    // Invited again after removal: back to sent.
    const again = await alice.call({ req: 'inviteMember', ...target, member: bob.code })
    assert.deepEqual(again.member, { u_c: bob.code, invite: 'sent', right: 2, del: false })
    await bob.call({ req: 'acceptInvitation', ...target })
    assert.equal(pick(await bob.call({ req: 'getBookMessages', ...target }), 'status'), 'ok')
  })

  test('leaveBook: any member but the owner', async ({ assert }) => {
    const {
      owner: alice,
      members: [bob],
      target,
    } = await sharedBook(1)
    expectNok(assert, await alice.call({ req: 'leaveBook', ...target }), 'FORBIDDEN')
    assert.equal(pick(await bob.call({ req: 'leaveBook', ...target }), 'status'), 'ok')
    expectNok(assert, await bob.call({ req: 'leaveBook', ...target }), 'NOT_FOUND')
    assert.deepEqual(pick(await listing(bob), 'books'), [])
    const members = pick(await alice.call({ req: 'getBookInfo', ...target }), 'book.members')
    assert.deepEqual(
      members.map((member: any) => member.u_c),
      [alice.code]
    )
    assert.strictEqual(
      pick(await alice.call({ req: 'getBookInfo', ...target }), 'book.nbMembers'),
      1
    )
  })

  test('membership writes are refused to read-only sessions', async ({ assert }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    const readonly = await sessionOf(alice, 'readonly')
    for (const req of [
      'inviteMember',
      'removeMember',
      'setMemberRight',
      'leaveBook',
      'acceptInvitation',
      'declineInvitation',
      'updateBook',
      'archiveBook',
      'unarchiveBook',
      'updateBookUserPrefs',
    ]) {
      expectNok(
        assert,
        await readonly.call({ req, ...target, member: bob.code, right: 2, title: 'x' }),
        'READONLY_SESSION'
      )
    }
  })
})
