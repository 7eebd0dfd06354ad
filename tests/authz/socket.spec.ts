import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import type { Session } from '#tests/helpers/users'
import {
  connect,
  ensureSocketEndpoint,
  type TestSocket,
} from '../functional/socket/socket_client.js'
import { SECRET, call, registeredSocketMessages, snapshot, world, type World } from './world.js'
import { AUTHZ_CODES, aimAt, touchesBook } from './fill.js'
import { SOCKET_AREAS, areaListGaps } from './areas.js'

/**
 * Every socket message type and system message (read from the plugin
 * registry), aimed at the victim's book by everyone who may not use it: each
 * is refused for a reason of access, no frame to the caller carries the
 * victim's data, and the victim's book is unchanged.
 */

type SocketMessage = Awaited<ReturnType<typeof registeredSocketMessages>>[number]

/** Socket messages that name no book (reviewed). */
const NO_BOOK: Record<string, string> = {
  updateUserInfo: "the caller's own user information",
}

/** Writes a member with the read right may make: their own state in the book (reviewed). */
const SELF_WRITES: Record<string, string> = {
  acceptInvitation: "the member's own invitation",
  clearNotRead: "the member's own unread count",
  updateBookParam: "the member's own book parameters (an owner's parameter is tried below)",
}

let w: World
let messages: SocketMessage[] = []
let before = ''
const sockets: TestSocket[] = []

/** A socket of `session`, attached, closed after the group. */
async function socketOf(session: Session) {
  const socket = await connect(session)
  sockets.push(socket)
  return socket.attach()
}

/** The frame of `message` aimed at the victim's book. */
function frameOf(message: SocketMessage, extra: Record<string, unknown> = {}) {
  const params = aimAt(message.name, message.params, {
    target: w.book,
    mine: w.own,
    memberCode: w.reader.code,
  })
  const uuid = randomUUID()
  return message.type === null
    ? { ...params, type: 11, msg: message.name, uuid, ...extra }
    : { ...params, type: message.type, uuid, ...extra }
}

/**
 * Sends each frame, then a ping: frames are handled in order, so everything
 * the server answered to the frame has arrived with the pong.
 */
async function probe(
  who: string,
  socket: TestSocket,
  frames: Record<string, any>[],
  codes = AUTHZ_CODES
) {
  const failures: string[] = []
  for (const frame of frames) {
    socket.frames.length = 0
    socket.send(frame)
    socket.send({ type: 9 })
    await socket.ofType(10, 5000)
    const answers = [...socket.frames]
    const label = `${who} ${frame.type === 11 ? frame.msg : `type ${frame.type}`}`
    const text = JSON.stringify(answers)
    if (text.includes(SECRET)) failures.push(`${label}: a frame carries the victim's data: ${text}`)
    const refusal = answers.find((answer) => answer.status === 'nok')
    if (!refusal) failures.push(`${label}: not refused: ${text.slice(0, 300)}`)
    else if (!codes.includes(refusal.errorCode))
      failures.push(`${label}: refused with ${refusal.errorCode}: ${text.slice(0, 300)}`)
    if (answers.some((answer) => answer.status === 'ok'))
      failures.push(`${label}: acknowledged: ${text.slice(0, 300)}`)
  }
  return failures
}

const touching = () =>
  messages.filter((message) => !(message.name in NO_BOOK) && touchesBook(message.params))

test.group('authz: socket messages', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
    w = await world()
    messages = await registeredSocketMessages()
    before = await snapshot(w.book)
  })
  group.teardown(async () => {
    await Promise.all(sockets.map((socket) => socket.close()))
  })
  group.each.teardown(async () => {
    if (!before) return
    const after = await snapshot(w.book)
    if (after === before) return
    before = after
    throw new Error("the victim's book changed: a refused frame wrote")
  })

  test('every registered socket message is covered or excluded with a reason', ({ assert }) => {
    const names = new Set(messages.map((message) => message.name))
    for (const name of [...Object.keys(NO_BOOK), ...Object.keys(SELF_WRITES)])
      assert.isTrue(names.has(name), `${name} is listed here but no longer registered`)
    assert.deepEqual(
      messages.filter((m) => !(m.name in NO_BOOK) && !touchesBook(m.params)).map((m) => m.name),
      [],
      'socket messages naming no book: aim them (tests/authz/fill.ts) or list them in NO_BOOK'
    )
    assert.isAbove(touching().length, 4)
  })

  test('every registered socket message has its expected area listed in areas.ts', ({ assert }) => {
    assert.deepEqual(
      areaListGaps(
        messages.map((message) => message.name),
        SOCKET_AREAS
      ),
      { unlisted: [], noLongerRegistered: [] },
      'list every socket message in tests/authz/areas.ts with its reviewed area'
    )
  })

  test('a stranger is refused every socket message on the victim’s book', async ({ assert }) => {
    const socket = await socketOf(w.attacker.session)
    const failures = await probe(
      'stranger',
      socket,
      touching().map((message) => frameOf(message))
    )
    assert.deepEqual(failures, [])
  })

  test('a member with the read right is refused every socket write but their own state', async ({
    assert,
  }) => {
    const socket = await socketOf(w.reader.session)
    const frames = touching()
      .filter((message) => message.writes && !(message.name in SELF_WRITES))
      .map((message) => frameOf(message))
    const updateBookParam = messages.find((message) => message.name === 'updateBookParam')
    if (updateBookParam) frames.push(frameOf(updateBookParam, { param: 'description', value: 'x' }))
    assert.isAbove(frames.length, 1)
    assert.deepEqual(await probe('reader', socket, frames), [])
  })

  test('a read-only session is refused every socket write', async ({ assert }) => {
    const socket = await socketOf(w.sessions.readonly)
    const frames = messages.filter((message) => message.writes).map((message) => frameOf(message))
    assert.deepEqual(await probe('read-only', socket, frames, ['READONLY_SESSION']), [])
  })

  test('a session restricted to another book is refused this one', async ({ assert }) => {
    const socket = await socketOf(w.sessions.restricted)
    const frames = touching().map((message) => frameOf(message))
    assert.deepEqual(await probe('restricted', socket, frames), [])
  })

  test('sessions hiding an area are refused its socket messages', async ({ assert }) => {
    const failures: string[] = []
    for (const [area, session] of [
      ['tables', w.sessions.hideTables],
      ['messages', w.sessions.hideMessages],
      ['events', w.sessions.hideEvents],
    ] as const) {
      const frames = messages
        .filter((m) => SOCKET_AREAS[m.name] === area)
        .map((message) => frameOf(message))
      if (!frames.length) continue
      const socket = await socketOf(session)
      failures.push(...(await probe(`hide ${area}`, socket, frames, ['RESTRICTED_SESSION'])))
    }
    assert.deepEqual(failures, [])
  })

  test('a dropped session is refused every socket message and its socket closed', async ({
    assert,
  }) => {
    const failures: string[] = []
    for (const frame of [
      { type: 7, version: '6.49' },
      { type: 9 },
      ...messages.map((message) => frameOf(message)),
    ]) {
      const socket = await connect(w.sessions.dropped)
      sockets.push(socket)
      socket.send(frame)
      const refusal = await socket.next((answer) => answer.status === 'nok', 5000)
      const closed = await Promise.race([
        socket.closed,
        new Promise<{ code: number }>((resolve) => setTimeout(() => resolve({ code: 0 }), 5000)),
      ])
      const label = frame.type === 11 ? (frame as any).msg : `type ${frame.type}`
      if (refusal.errorCode !== 'INVALID_SESSKEY') failures.push(`${label}: ${refusal.errorCode}`)
      if (closed.code !== 4001) failures.push(`${label}: closed with ${closed.code}`)
      if (JSON.stringify(socket.frames).includes(SECRET)) failures.push(`${label}: leak`)
    }
    assert.deepEqual(failures, [])
  })

  test("the victim's book activity reaches its members' sockets, never a stranger's", async ({
    assert,
  }) => {
    const stranger = await socketOf(w.attacker.session)
    const reader = await socketOf(w.reader.session)
    stranger.frames.length = 0
    const uuid = randomUUID()
    const sent = await call(w.victim.session, 'sendMsg', {
      b_o: w.book.b_o,
      b_c: w.book.b_c,
      msg: `${SECRET} live`,
      uuid,
    })
    assert.equal(sent.status, 'ok')
    const pushed = await reader.next((frame) => frame.type === 1 && frame.uuid === uuid, 5000)
    assert.include(pushed.msg, SECRET)
    // Anything the server had queued for the stranger has arrived with this pong.
    stranger.send({ type: 9 })
    await stranger.ofType(10, 5000)
    assert.notInclude(JSON.stringify(stranger.frames), SECRET)
    // The legitimate message is the one change of the victim's book here.
    before = await snapshot(w.book)
  })
})
