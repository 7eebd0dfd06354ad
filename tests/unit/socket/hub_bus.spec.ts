import { test } from '@japa/runner'
import type { Logger } from '@adonisjs/core/logger'
import { SocketHub, type HubBus, type HubConnection } from '#core/socket/hub'
import { MessageType } from '#core/socket/protocol'

/**
 * Two hubs joined by a bus that behaves as a Redis channel does: every message published reaches
 * every subscriber (the publisher too, as Redis echoes it), later, in publication order.
 */
function joinedHubs() {
  const subscribers: ((raw: string) => void)[] = []
  const published: string[] = []
  const bus = (): HubBus => ({
    publish: async (raw) => {
      published.push(raw)
      setTimeout(() => subscribers.forEach((handler) => handler(raw)), 1)
    },
    subscribe: (handler) => {
      subscribers.push(handler)
    },
  })
  const errors: unknown[] = []
  const logger = { error: (...args: unknown[]) => errors.push(args) } as unknown as Logger
  const make = async () => {
    const hub = new SocketHub(logger, {
      bookUpdatesDelayMs: 5,
      codesOf: async () => new Map(),
    })
    await hub.useBus(bus())
    return hub
  }
  return { make, published, errors }
}

function connection(id: string, userId: number) {
  const received: any[] = []
  const socket: HubConnection & { received: any[] } = {
    id,
    userId,
    userCode: `u${userId}`,
    sessionId: null,
    sendRaw: (data) => received.push(JSON.parse(String(data))),
    close: () => {},
    received,
  }
  return socket
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 30))

test.group('socket hub: the bus between instances', () => {
  test('the deliveries and signals of one turn go out as one bus message, in order, to the other instance only', async ({
    assert,
  }) => {
    const { make, published, errors } = joinedHubs()
    const [sender, other] = [await make(), await make()]
    const here = connection('here', 1)
    const there = connection('there', 1)
    sender.index(here)
    other.index(there)
    const signals: unknown[] = []
    other.onSignal('topic', (data) => signals.push(data))
    sender.onSignal('topic', (data) => signals.push(['echoed', data]))

    for (let index = 0; index < 5; index++) {
      sender.deliver({ userIds: [1], frame: { type: MessageType.SEND_MESSAGE, msg: `m${index}` } })
      if (index === 2) sender.signal('topic', 'between')
    }
    // Local sockets get each frame at once.
    assert.deepEqual(
      here.received.map((frame) => frame.msg),
      ['m0', 'm1', 'm2', 'm3', 'm4']
    )
    await settle()
    assert.lengthOf(published, 1)
    assert.deepEqual(
      there.received.map((frame) => frame.msg),
      ['m0', 'm1', 'm2', 'm3', 'm4']
    )
    assert.deepEqual(signals, ['between'])
    // The sender skips its own messages coming back from the channel: no second copy.
    assert.lengthOf(here.received, 5)

    // A later turn: a message of its own, alone (not a batch).
    sender.deliver({ userIds: [1], frame: { type: MessageType.SEND_MESSAGE, msg: 'later' } })
    await settle()
    assert.lengthOf(published, 2)
    assert.equal(JSON.parse(published[1]).k, 'deliver')
    assert.deepEqual(
      there.received.map((frame) => frame.msg),
      ['m0', 'm1', 'm2', 'm3', 'm4', 'later']
    )
    assert.deepEqual(errors, [])
    await Promise.all([sender.shutdown(), other.shutdown()])
  })

  test('shutdown publishes what the current turn queued', async ({ assert }) => {
    const { make, published } = joinedHubs()
    const [sender, other] = [await make(), await make()]
    const there = connection('there', 7)
    other.index(there)
    sender.deliver({ userIds: [7], frame: { type: MessageType.SEND_MESSAGE, msg: 'last words' } })
    await sender.shutdown()
    assert.lengthOf(published, 1)
    await settle()
    assert.deepEqual(
      there.received.map((frame) => frame.msg),
      ['last words']
    )
    await other.shutdown()
  })
})
