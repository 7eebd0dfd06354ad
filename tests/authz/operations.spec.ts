import { test } from '@japa/runner'
import type { Session } from '#tests/helpers/users'
import {
  SECRET,
  call,
  registeredOperations,
  snapshot,
  world,
  type OperationInfo,
  type World,
} from './world.js'
import { AUTHZ_CODES, aimAt, namesObject, touchesBook } from './fill.js'
import { OPERATION_AREAS, TARGET_AIMS, areaListGaps } from './areas.js'

/**
 * Every api.php operation that touches a book, table, row, message, event or
 * comment (read from the plugin registry), aimed at the victim's objects by
 * everyone who may not use them: each gets a nok for a reason of access (never
 * a validation error: the request was well formed), its answer carries none
 * of the victim's data, and the victim's book is unchanged afterwards.
 */

/** Operations that name no book object of anyone else: reviewed, with the reason. */
const NO_BOOK: Record<string, string> = {
  createAppkey: 'key creation (no session): names an application, no user or book',
  createOauthkey: 'key creation: checks a login and password, touches no book',
  createSesskey: 'key creation from an oauthkey of the caller: no book',
  getOrCreateSessKey: 'key creation for the caller: no book',
  dropAllSessions: "drops the caller's own sessions only",
  getUserInfo: "the caller's own account (its answer is checked for leaks below)",
  setProfileImage: "the caller's own profile image",
  resumableUpload:
    'answers the tus upload URL; the upload itself names its message or cell (tus tests)',
  createBook: 'creates a book owned by the caller: b_c names the new book, never an existing one',
  updatePushId:
    "the caller's own push devices (deviceID of another user: NOT_FOUND, gateways tests)",
  unregisterSMSGateway: "a gateway's sesskey only (a user's answers INVALID_SESSKEY): no book",
  getGatewayOutbox:
    "a gateway's sesskey only (a user's answers INVALID_SESSKEY): the gateway's own SMS, no book",
}

/**
 * Writes a member with the lowest right may make, since they concern only
 * that member's own state in the book (reviewed).
 */
const SELF_WRITES: Record<string, string> = {
  acceptInvitation: "the member's own invitation",
  declineInvitation: "the member's own invitation (declining leaves the book)",
  leaveBook: 'a member may always leave',
  updateBookUserPrefs: "the member's own preferences for the book",
  markBooksMessagesAsRead: "the member's own read marks",
  setBookCover: "a member's own cover of the book (as=member); as=owner is tried below",
}

/** Reads whose book parameters are a filter over the caller's own books: a foreign one matches nothing. */
const FILTERS: Record<string, string> = {
  getAllBooks: "lists the caller's books; b_o/b_c only narrow that list",
}

/**
 * Operations on the caller's own book where another book's id is only a
 * filter or a marker there: it matches nothing of the caller's and reveals
 * nothing of the other book (the answer is still checked for leaks).
 */
const OWN_BOOK_FILTERS: Record<string, string> = {
  getBookEvents: "events_ids selects among the caller's own book's events",
  markBooksMessagesAsRead: "smid is a read mark in the caller's own book",
}

interface Failure {
  who: string
  operation: string
  why: string
  answer: string
}

/** Sends each request, collects every way it fails the rule. */
async function probe(
  who: string,
  session: Pick<Session, 'o_u' | 'sesskey'>,
  cases: { operation: string; params: Record<string, unknown>; codes?: string[] }[],
  mayAnswer: Record<string, string> = FILTERS
) {
  const failures: Failure[] = []
  for (const { operation, params, codes = AUTHZ_CODES } of cases) {
    const answer = await call(session, operation, params)
    const text = JSON.stringify(answer)
    const fail = (why: string) => failures.push({ who, operation, why, answer: text.slice(0, 300) })
    if (text.includes(SECRET)) fail("the answer carries the victim's data")
    if (answer.status === 'ok' && operation in mayAnswer) continue
    if (answer.status !== 'nok') fail('not refused')
    else if (!codes.includes(answer.errorCode)) fail(`refused with ${answer.errorCode}`)
  }
  return failures
}

function report(failures: Failure[]) {
  return failures.map((f) => `${f.who} ${f.operation}: ${f.why} -> ${f.answer}`).join('\n')
}

let operations: OperationInfo[] = []
let w: World
let before = ''

/** The operations aimed at a book's objects (session auth: anonymous access is tested elsewhere). */
const covered = () =>
  operations.filter(
    (operation) =>
      !(operation.name in NO_BOOK) && operation.auth !== 'none' && touchesBook(operation.params)
  )

const aimed = (operation: OperationInfo, mine = w.own) =>
  aimAt(operation.name, operation.params, {
    target: w.book,
    mine,
    memberCode: w.reader.code,
  })

test.group('authz: api.php operations', (group) => {
  group.setup(async () => {
    operations = await registeredOperations()
    w = await world()
    before = await snapshot(w.book)
  })

  // Nothing any refused request did may show in the victim's book.
  group.each.teardown(async () => {
    if (!before) return
    const after = await snapshot(w.book)
    if (after === before) return
    before = after // one failure, not one per following test
    throw new Error("the victim's book changed: a refused request wrote")
  })

  test('every registered operation is covered or excluded with a reason', ({ assert }) => {
    const names = new Set(operations.map((operation) => operation.name))
    for (const name of [...Object.keys(NO_BOOK), ...Object.keys(SELF_WRITES)]) {
      assert.isTrue(names.has(name), `${name} is listed here but no longer registered`)
    }
    const unclassified = operations.filter(
      (operation) =>
        operation.auth !== 'none' && !(operation.name in NO_BOOK) && !touchesBook(operation.params)
    )
    assert.deepEqual(
      unclassified.map((operation) => operation.name),
      [],
      'operations naming no book object: aim them (tests/authz/fill.ts) or list them in NO_BOOK with a reason'
    )
    assert.isAbove(covered().length, 40)
  })

  test('every registered operation has its expected area listed in areas.ts', ({ assert }) => {
    assert.deepEqual(
      areaListGaps(
        operations.map((operation) => operation.name),
        OPERATION_AREAS
      ),
      { unlisted: [], noLongerRegistered: [] },
      'list every operation in tests/authz/areas.ts with its reviewed area'
    )
    for (const name of Object.keys(TARGET_AIMS))
      assert.equal(OPERATION_AREAS[name], 'by target', `${name} has TARGET_AIMS`)
    for (const [name, area] of Object.entries(OPERATION_AREAS))
      if (area === 'by target') assert.isDefined(TARGET_AIMS[name], `${name}: aim it at each area`)
  })

  test('control: the owner’s unrestricted session reaches each target of a by-target operation', async ({
    assert,
  }) => {
    for (const [operation, aims] of Object.entries(TARGET_AIMS)) {
      for (const [area, aim] of Object.entries(aims)) {
        const answer = await call(w.victim.session, operation, aim!(w.book))
        assert.equal(answer.status, 'ok', `${operation} ${area}: ${JSON.stringify(answer)}`)
      }
    }
    // The owner's own uploads are the one change of the victim's book here.
    before = await snapshot(w.book)
  })

  test('control: the owner gets every read aimed the same way answered', async ({ assert }) => {
    const failures: string[] = []
    for (const operation of covered().filter((candidate) => !candidate.writes)) {
      const answer = await call(w.victim.session, operation.name, aimed(operation, w.book))
      if (answer.status !== 'ok')
        failures.push(`${operation.name}: ${JSON.stringify(answer).slice(0, 300)}`)
    }
    assert.deepEqual(
      failures,
      [],
      'the aimed requests must be well formed for this suite to mean anything'
    )
  })

  test('a stranger is refused every operation on the victim’s objects', async ({ assert }) => {
    const failures = await probe(
      'stranger',
      w.attacker.session,
      covered().map((operation) => ({ operation: operation.name, params: aimed(operation) }))
    )
    assert.equal(report(failures), '')
  })

  test('a stranger mixing the victim’s ids into requests on their own book is refused', async ({
    assert,
  }) => {
    const cases = covered()
      .filter((operation) => namesObject(operation.params))
      .map((operation) => {
        const params = aimed(operation)
        // The caller's own book, the victim's table, row, field, message...
        if ('b_o' in params) params.b_o = w.own.b_o
        if ('b_c' in params) params.b_c = w.own.b_c
        return { operation: operation.name, params }
      })
    const failures = await probe(
      'stranger (own book, victim ids)',
      w.attacker.session,
      cases,
      OWN_BOOK_FILTERS
    )
    assert.equal(report(failures), '')
  })

  test('lists mixing the caller’s ids with the victim’s show and change only the caller’s', async ({
    assert,
  }) => {
    const { own, book } = w
    const mine = { b_o: own.b_o, b_c: own.b_c }
    const cases: [string, Record<string, unknown>][] = [
      [
        'getTableValueSubset',
        {
          b_o: own.b_o,
          catId: own.catId,
          fieldIds: [own.nameField],
          rowIds: [own.rowId, book.rowId],
        },
      ],
      ['getTableRows', { b_o: own.b_o, catId: own.catId, rowIds: [own.rowId, book.rowId] }],
      [
        'getTableValues',
        {
          b_o: own.b_o,
          catId: own.catId,
          filterRowIds: [own.rowId, book.rowId],
          format: 'diff_ready_rows',
        },
      ],
      ['listTableRowsById', { b_o: own.b_o, catId: own.catId }],
      [
        'computeTableOperation',
        {
          b_o: own.b_o,
          catId: own.catId,
          operation: 'count',
          filterRowIds: [own.rowId, book.rowId],
        },
      ],
      ['getBookEvents', { ...mine, events_ids: [own.eventId, book.eventId] }],
      ['getBookMessages', { ...mine, smidFirst: book.smid, smidLast: book.smid }],
      [
        'createOrUpdateTableRows',
        {
          b_o: own.b_o,
          catId: own.catId,
          rows: {
            [own.rowId]: { [own.nameField]: 'mine' },
            [book.rowId]: { [own.nameField]: 'theirs' },
          },
        },
      ],
      [
        'createOrUpdateTableRows',
        { b_o: own.b_o, catId: own.catId, rows: { [own.rowId]: { [book.nameField]: 'theirs' } } },
      ],
      ['deleteTableRows', { b_o: own.b_o, catId: own.catId, rows: [own.otherRowId, book.rowId] }],
      [
        'updateTableValue',
        { b_o: own.b_o, rowId: String(own.rowId), fieldId: book.nameField, value: 'theirs' },
      ],
      [
        'updateTableValue',
        { b_o: own.b_o, rowId: String(book.rowId), fieldId: own.nameField, value: 'theirs' },
      ],
      [
        'createOrUpdateTableRow',
        {
          b_o: own.b_o,
          catId: own.catId,
          rowId: String(book.rowId),
          fieldValues: { [own.nameField]: 'theirs' },
        },
      ],
      [
        'getTableValueComments',
        { b_o: own.b_o, fieldId: own.talkField, rowId: String(book.rowId) },
      ],
      [
        'editTableValueComments',
        {
          b_o: own.b_o,
          fieldId: own.talkField,
          rowId: String(own.rowId),
          id: book.commentId,
          m: 'theirs',
        },
      ],
      [
        'deleteTableValueComments',
        {
          b_o: own.b_o,
          fieldId: own.talkField,
          rowId: String(own.rowId),
          ids: [own.commentId, book.commentId],
        },
      ],
      ['deleteMsg', { ...mine, msg_id: book.smid }],
      ['sendMsg', { ...mine, msg_id: book.smid, msg: 'theirs' }],
      ['copyOrMoveMessage', { ...mine, msg_id: book.smid, to_b_o: own.b_o, to_b_c: own.b_c }],
      ['copyOrMoveMessage', { ...mine, msg_id: own.smid, to_b_o: book.b_o, to_b_c: book.b_c }],
      ['markBooksMessagesAsRead', { books: [mine, { b_o: book.b_o, b_c: book.b_c }] }],
    ]
    const failures: Failure[] = []
    for (const [operation, params] of cases) {
      const answer = await call(w.attacker.session, operation, params)
      const text = JSON.stringify(answer)
      if (text.includes(SECRET))
        failures.push({ who: 'mixed', operation, why: 'leak', answer: text.slice(0, 300) })
      // A foreign id inside the caller's own table is "not a field/row of this table".
      if (
        answer.status === 'nok' &&
        ![...AUTHZ_CODES, 'INVALID_PARAMETER'].includes(answer.errorCode)
      )
        failures.push({
          who: 'mixed',
          operation,
          why: answer.errorCode,
          answer: text.slice(0, 300),
        })
    }
    assert.equal(report(failures), '')
  })

  test('a member with the read right is refused every write but their own state', async ({
    assert,
  }) => {
    const cases = covered()
      .filter((operation) => operation.writes && !(operation.name in SELF_WRITES))
      .map((operation) => ({ operation: operation.name, params: aimed(operation, w.book) }))
    cases.push({
      operation: 'setBookCover',
      params: { b_o: w.book.b_o, b_c: w.book.b_c, as: 'owner' },
    })
    const failures = await probe('reader', w.reader.session, cases)
    assert.equal(report(failures), '')
  })

  test('a read-only session of the owner is refused every write', async ({ assert }) => {
    const cases = operations
      // A gateway-only operation refuses every user session before any restriction.
      .filter((operation) => operation.writes && !['none', 'gateway'].includes(operation.auth))
      .map((operation) => ({
        operation: operation.name,
        params: { ...aimed(operation, w.book), b_c: w.book.b_c },
        codes: ['READONLY_SESSION'],
      }))
    const failures = await probe('read-only', w.sessions.readonly, cases)
    assert.equal(report(failures), '')
  })

  test('a session of the owner restricted to another book is refused this one', async ({
    assert,
  }) => {
    const cases = covered().map((operation) => ({
      operation: operation.name,
      params: aimed(operation, w.book),
    }))
    const failures = await probe('restricted', w.sessions.restricted, cases)
    assert.equal(report(failures), '')
  })

  test('sessions hiding tables, messages or events are refused those areas', async ({ assert }) => {
    const failures: Failure[] = []
    for (const [area, session] of [
      ['tables', w.sessions.hideTables],
      ['messages', w.sessions.hideMessages],
      ['events', w.sessions.hideEvents],
    ] as const) {
      const cases = operations
        .filter((operation) => OPERATION_AREAS[operation.name] === area)
        .map((operation) => ({
          operation: operation.name,
          params: aimed(operation, w.book),
          codes: ['RESTRICTED_SESSION'],
        }))
      // Operations whose area is their target's, aimed at a target of this area.
      for (const [operation, aims] of Object.entries(TARGET_AIMS)) {
        const aim = aims[area]
        if (aim) cases.push({ operation, params: aim(w.book), codes: ['RESTRICTED_SESSION'] })
      }
      assert.isAbove(cases.length, 0, area)
      failures.push(...(await probe(`hide ${area}`, session, cases)))
    }
    assert.equal(report(failures), '')
  })

  test('a dropped session of an administrator is refused everything', async ({ assert }) => {
    const cases = operations
      .filter((operation) => operation.auth !== 'none')
      .map((operation) => ({
        operation: operation.name,
        params: aimed(operation, w.book),
        codes: ['INVALID_SESSKEY'],
      }))
    const failures = await probe('dropped', w.sessions.dropped, cases)
    assert.equal(report(failures), '')
  })

  test('the stranger’s own listings show nothing of the victim', async ({ assert }) => {
    for (const [operation, params] of [
      ['getAllBooks', {}],
      ['getUserInfo', {}],
      ['getBookTables', { b_o: w.own.b_o, b_c: w.own.b_c, includeFields: 'true' }],
      ['getBookMessages', { b_o: w.own.b_o, b_c: w.own.b_c }],
      ['getBookEvents', { b_o: w.own.b_o, b_c: w.own.b_c }],
    ] as const) {
      const answer = await call(w.attacker.session, operation, params)
      assert.equal(answer.status, 'ok', `${operation}: ${JSON.stringify(answer).slice(0, 300)}`)
      assert.notInclude(JSON.stringify(answer), SECRET, operation)
    }
  })
})
