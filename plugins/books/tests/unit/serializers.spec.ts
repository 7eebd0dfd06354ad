import { test } from '@japa/runner'
import type { BookRow, EventRow, MemberRow, MessageRow } from '../../models/records.js'
import {
  serializeLastMessage,
  serializeMedia,
  serializeMessage,
} from '../../serializers/message_serializer.js'
import {
  serializeBook,
  serializeBookUserPrefs,
  serializeContact,
  serializeFpForm,
  serializeMember,
  serializeOwnerPrefs,
  type BookView,
} from '../../serializers/book_serializer.js'
import { serializeBookEvent, serializeEventFields } from '../../serializers/event_serializer.js'

/** MySQL answers booleans as 0/1 and may answer numbers as strings: serializers must type them. */
const message = (overrides: Partial<MessageRow> = {}): MessageRow => ({
  smid: 42,
  book_id: 7,
  uuid: 'u-1',
  creator_id: 3,
  pid: 0,
  msg: 'hello',
  msg_body: 'text body',
  msg_body_html: '<p>html body</p>',
  msg_type: 'm',
  msg_method: '_mail',
  msg_color: 'red',
  nb_comments: 2,
  last_comment_id: 9,
  nb_medias: 1,
  nb_email_cids: 0,
  nb_docs: 1,
  medias: JSON.stringify([
    {
      id: '5',
      ext: 'jpg',
      originName: 'a.jpg',
      internName: 'x',
      uuid: 'm-1',
      size: '10',
      type: 'media',
      emailCid: '',
      del: 0,
    },
  ]),
  has_event: 0,
  del: 0,
  created: 1_700_000_000,
  last_modified: 1_700_000_100,
  cstamp: 17_000_000_000_000,
  sstamp: 17_000_000_000_001,
  ...overrides,
})

const book = (overrides: Partial<BookRow> = {}): BookRow => ({
  id: 7,
  owner_id: 1,
  code: 'team',
  description: 'desc',
  owner_prefs: JSON.stringify({ title: 'Team', oCoverUseLastImg: '1', acceptExternalMsg: 'false' }),
  fp_form: JSON.stringify({ id: 12, name: 'Form', lastModified: 1_700_000_000 }),
  archived: 0,
  del: 0,
  last_media: 5,
  nb_msgs: 10,
  counted_until: 0,
  sstamp: 17_000_000_000_000,
  ...overrides,
})

const member = (overrides: Partial<MemberRow> = {}): MemberRow => ({
  id: 1,
  book_id: 7,
  user_id: 2,
  invite: 'accepted',
  right: 3,
  invited_by: 1,
  user_prefs: JSON.stringify({ maxMsgsOffline: '200', syncWithStorage: 1 }),
  favorite: 1,
  sort_order: 4,
  last_msg_read: 40,
  nb_not_read: 2,
  last_open_at: null,
  del: 0,
  sstamp: 17_000_000_000_000,
  ...overrides,
})

const eventRow: EventRow = {
  id: 3,
  book_id: 7,
  smid: 42,
  creator_id: 3,
  event_start: 1_700_000_000,
  event_end: 1_700_003_600,
  event_timezone: 'Europe/Paris',
  all_day: 0,
  is_busy: 1,
  reminder_data: JSON.stringify({ email: true, time: 900, remindermember: 1 }),
  del: 0,
  created: 1_700_000_000,
  last_modified: 1_700_000_000,
  sstamp: 17_000_000_000_002,
}

test.group('message serializer', () => {
  test('every field of 2.5 with its wire name and JSON type', ({ assert }) => {
    const wire = serializeMessage(message(), { u_c: 'alice' })
    assert.deepEqual(Object.keys(wire).sort(), [
      'created',
      'del',
      'lastCommentId',
      'lastModified',
      'medias',
      'msg',
      'msgBody',
      'msgBodyHTML',
      'msgColor',
      'msgMethod',
      'msgType',
      'nbComments',
      'nbDocs',
      'nbEmailCids',
      'nbMedias',
      'pid',
      'smid',
      'sstamp',
      'u_c',
      'uuid',
    ])
    assert.strictEqual(wire.smid, 42)
    assert.strictEqual(wire.uuid, 'u-1')
    assert.strictEqual(wire.u_c, 'alice')
    assert.strictEqual(wire.created, 1_700_000_000)
    assert.strictEqual(wire.lastModified, 1_700_000_100)
    assert.strictEqual(wire.sstamp, 17_000_000_000_001)
    assert.strictEqual(wire.del, false)
    assert.strictEqual(wire.pid, 0)
    assert.strictEqual(wire.msg, 'hello')
    assert.strictEqual(wire.msgBody, 'text body')
    assert.strictEqual(wire.msgBodyHTML, '<p>html body</p>')
    assert.strictEqual(wire.msgType, 'm')
    assert.strictEqual(wire.msgMethod, '_mail')
    assert.strictEqual(wire.msgColor, 'red')
    assert.strictEqual(wire.nbComments, 2)
    assert.strictEqual(wire.lastCommentId, 9)
    assert.strictEqual(wire.nbMedias, 1)
    assert.strictEqual(wire.nbEmailCids, 0)
    assert.strictEqual(wire.nbDocs, 1)
    assert.deepEqual(wire.medias, [
      {
        id: 5,
        ext: 'jpg',
        originName: 'a.jpg',
        internName: 'x',
        uuid: 'm-1',
        size: 10,
        type: 'media',
        emailCid: '',
        del: false,
      },
    ])
  })

  test('numbers given as strings (MySQL bigints) become numbers', ({ assert }) => {
    const wire = serializeMessage(
      message({ smid: '42' as any, sstamp: '17000000000001' as any, del: 1 }),
      { u_c: 'a' }
    )
    assert.strictEqual(wire.smid, 42)
    assert.strictEqual(wire.sstamp, 17_000_000_000_001)
    assert.strictEqual(wire.del, true)
  })

  test('a deleted message keeps its identity but not its content', ({ assert }) => {
    const wire = serializeMessage(message({ del: 1 }), { u_c: 'alice' })
    assert.strictEqual(wire.del, true)
    assert.strictEqual(wire.msg, '')
    assert.strictEqual(wire.msgBody, '')
    assert.strictEqual(wire.msgBodyHTML, '')
    assert.deepEqual(wire.medias, [])
    assert.strictEqual(wire.uuid, 'u-1')
  })

  test('the event of a message is answered with the 2.9 fields', ({ assert }) => {
    const wire = serializeMessage(message({ has_event: 1 }), {
      u_c: 'alice',
      event: { row: eventRow, participants: [{ id: 2, u_c: 'bob' }] },
    })
    assert.deepEqual(wire.event, {
      eventStart: 1_700_000_000,
      eventEnd: 1_700_003_600,
      eventTimezone: 'Europe/Paris',
      eventAllDay: false,
      isBusy: true,
      eventParticipants: [{ id: 2, u_c: 'bob' }],
      reminderData: {
        email: true,
        sms: false,
        alarmMobile: false,
        alarm: false,
        time: 900,
        remindermember: 1,
      },
    })
  })

  test("a book's lastMsg spells msgBodyHtml, has no e-mail bodies, and carries b_c and b_o", ({
    assert,
  }) => {
    const wire: Record<string, unknown> = serializeLastMessage(message(), {
      u_c: 'alice',
      b_o: 'owner',
      b_c: 'team',
    })
    assert.notProperty(wire, 'msgBodyHTML')
    assert.strictEqual(wire.msgBodyHtml, '')
    assert.strictEqual(wire.msgBody, '')
    assert.strictEqual(wire.b_c, 'team')
    assert.strictEqual(wire.b_o, 'owner')
    assert.strictEqual(wire.msg, 'hello')
    assert.strictEqual(wire.smid, 42)
  })

  test('media defaults and types', ({ assert }) => {
    assert.deepEqual(serializeMedia({}), {
      id: 0,
      ext: '',
      originName: '',
      internName: '',
      uuid: '',
      size: 0,
      type: 'media',
      emailCid: '',
      del: false,
    })
    assert.strictEqual(serializeMedia({ type: 'doc' }).type, 'doc')
  })
})

test.group('book serializer', () => {
  const view = (overrides: Partial<BookView> = {}): BookView => ({
    book: book(),
    ownerCode: 'owner',
    viewerCode: 'bob',
    member: member(),
    members: [
      { u_c: 'owner', invite: 'accepted', right: 4 },
      { u_c: 'bob', invite: 'accepted', right: 3 },
    ],
    lastMsg: { row: message(), u_c: 'owner' },
    nbMsgs: 10,
    nbNotRead: 2,
    sstamp: 17_000_000_000_005,
    gone: false,
    showMessages: true,
    ...overrides,
  })

  test('every field of spec 2.4 and of client-facts "Users and books" with its JSON type', ({
    assert,
  }) => {
    const wire = serializeBook(view())
    assert.deepEqual(Object.keys(wire).sort(), [
      'accepted',
      'archived',
      'b_c',
      'b_o',
      'contact_u_c',
      'del',
      'description',
      'favorite',
      'fpForm',
      'invited',
      'lastMedia',
      'lastMsg',
      'lastMsgRead',
      'members',
      'nbMembers',
      'nbMsgs',
      'nbNotRead',
      'order',
      'ownerPrefs',
      'right',
      'sbid',
      'sstamp',
      'userPrefs',
    ])
    assert.strictEqual(wire.sbid, 7)
    assert.strictEqual(wire.b_o, 'owner')
    assert.strictEqual(wire.b_c, 'team')
    assert.strictEqual(wire.accepted, true)
    assert.strictEqual(wire.invited, false)
    assert.strictEqual(wire.archived, false)
    assert.strictEqual(wire.del, false)
    assert.strictEqual(wire.sstamp, 17_000_000_000_005)
    assert.strictEqual(wire.description, 'desc')
    assert.strictEqual(wire.contact_u_c, 'owner')
    assert.strictEqual(wire.right, 3)
    assert.strictEqual(wire.nbNotRead, 2)
    assert.strictEqual(wire.nbMembers, 2)
    assert.strictEqual(wire.nbMsgs, 10)
    assert.strictEqual(wire.lastMsgRead, 40)
    assert.strictEqual(wire.lastMedia, 5)
    assert.strictEqual(wire.favorite, true)
    assert.strictEqual(wire.order, 4)
    assert.isArray(wire.members)
    assert.deepEqual(wire.members[1], {
      u_c: 'bob',
      invite: 'accepted',
      right: 3,
      access: 3,
      apiRight: '1',
    })
    assert.deepEqual(wire.fpForm, {
      sfpid: 12,
      fpid: 12,
      name: 'Form',
      lastModified: 1_700_000_000,
    })
    assert.strictEqual(wire.lastMsg!.msgBodyHtml, '')
    assert.strictEqual(wire.lastMsg!.b_c, 'team')
    assert.strictEqual(wire.ownerPrefs.title, 'Team')
    assert.strictEqual((wire.userPrefs as Record<string, unknown>).maxMsgsOffline, 200)
  })

  test('contact_u_c is null unless the book has exactly two members', ({ assert }) => {
    const three = view({
      members: [
        { u_c: 'owner', invite: 'accepted', right: 4 },
        { u_c: 'bob', invite: 'accepted', right: 3 },
        { u_c: 'carol', invite: 'sent', right: 2 },
      ],
    })
    assert.isNull(serializeBook(three).contact_u_c)
    assert.strictEqual(serializeBook(three).nbMembers, 2)
  })

  test('an invited member sees accepted false, invited true, and no messages', ({ assert }) => {
    const wire = serializeBook(view({ member: member({ invite: 'sent' }), showMessages: false }))
    assert.strictEqual(wire.accepted, false)
    assert.strictEqual(wire.invited, true)
    assert.isNull(wire.lastMsg)
    assert.strictEqual(wire.nbMsgs, 0)
    assert.strictEqual(wire.nbNotRead, 0)
    assert.strictEqual(wire.right, 0)
  })

  test('a book left or lost is answered with del true and nothing of its content', ({ assert }) => {
    const wire = serializeBook(view({ gone: true }))
    assert.strictEqual(wire.del, true)
    assert.strictEqual(wire.accepted, false)
    assert.deepEqual(wire.members, [])
    assert.isNull(wire.lastMsg)
    assert.strictEqual(wire.nbMembers, 0)
    assert.strictEqual(wire.nbMsgs, 0)
  })

  test('member: an invitation has access 0 and apiRight "0"', ({ assert }) => {
    assert.deepEqual(serializeMember({ u_c: 'x', invite: 'sent', right: 2 }), {
      u_c: 'x',
      invite: 'sent',
      right: 2,
      access: 0,
      apiRight: '0',
    })
  })

  test('fpForm defaults: both sfpid and fpid', ({ assert }) => {
    assert.deepEqual(serializeFpForm(null), { sfpid: 0, fpid: 0, name: '', lastModified: 0 })
  })

  test('ownerPrefs: every key, typed, with a non-null title', ({ assert }) => {
    const prefs = serializeOwnerPrefs(
      JSON.stringify({ oCoverUseLastImg: '1', oCoverImg: '', title: null })
    )
    assert.deepEqual(prefs, {
      oCoverColor: '',
      oCoverUseLastImg: true,
      oCoverImg: null,
      oCoverType: '',
      authorizeMemberBroadcast: false,
      acceptExternalMsg: false,
      title: '',
      notifyMobileConfidential: false,
    })
  })

  test('userPrefs: every key, typed, with syncWithHubic mirroring syncWithStorage', ({
    assert,
  }) => {
    const prefs = serializeBookUserPrefs(
      JSON.stringify({
        syncWithStorage: 'true',
        maxMsgsOffline: '30',
        uCoverImg: '/live/dbi/in/tb/x/y.jpg',
      })
    )
    assert.deepEqual(prefs, {
      maxMsgsOffline: 30,
      syncWithStorage: true,
      uCoverLetOwnerDecide: true,
      uCoverColor: '',
      uCoverUseLastImg: false,
      uCoverImg: '/live/dbi/in/tb/x/y.jpg',
      uCoverType: '',
      inGlobalSearch: true,
      inGlobalTasks: true,
      notifyEmailCopy: false,
      notifySmsCopy: false,
      notifyMobile: true,
      notifyWhenMsgInArchivedBook: false,
      syncWithHubic: true,
    })
  })

  test('contact: u_c, lastName, firstName, sstamp, isConfirmed', ({ assert }) => {
    assert.deepEqual(
      serializeContact({
        u_c: 'bob',
        firstName: 'Bob',
        lastName: 'B',
        sstamp: '12' as any,
        isConfirmed: 1 as any,
      }),
      { u_c: 'bob', lastName: 'B', firstName: 'Bob', sstamp: 12, isConfirmed: true }
    )
  })
})

test.group('event serializer', () => {
  test('getBookEvents record: identity, message, book and the 2.9 fields', ({ assert }) => {
    const wire = serializeBookEvent(eventRow, {
      u_c: 'alice',
      b_o: 'owner',
      b_c: 'team',
      msg: 'Meeting',
      uuid: 'u-1',
      participants: [{ id: 2, u_c: 'bob' }],
    })
    assert.deepEqual(wire, {
      id: 3,
      smid: 42,
      uuid: 'u-1',
      b_o: 'owner',
      b_c: 'team',
      u_c: 'alice',
      msg: 'Meeting',
      ...serializeEventFields(eventRow, [{ id: 2, u_c: 'bob' }]),
      created: 1_700_000_000,
      lastModified: 1_700_000_000,
      sstamp: 17_000_000_000_002,
      del: false,
    })
    assert.strictEqual(wire.isBusy, true)
    assert.strictEqual(wire.eventAllDay, false)
    assert.strictEqual(wire.reminderData.time, 900)
  })
})
