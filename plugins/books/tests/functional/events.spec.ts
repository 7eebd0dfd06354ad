import { test } from '@japa/runner'
import { book, client, expectNok, send, sessionOf, share, pick } from '../helpers/books.js'

const at = (iso: string) => Math.floor(Date.parse(iso) / 1000)

test.group('calendar events', (group) => {
  let alice: Awaited<ReturnType<typeof client>>
  let bob: Awaited<ReturnType<typeof client>>
  let target: { b_o: string; b_c: string }
  let ids: Record<string, number>

  group.setup(async () => {
    alice = await client()
    bob = await client()
    target = await book(alice)
    await share(alice, target, bob)
    const event = (
      start: string,
      end: string,
      participants: unknown[],
      extra: Record<string, unknown> = {}
    ) =>
      JSON.stringify({
        eventStart: at(start),
        eventEnd: at(end),
        eventTimezone: 'Europe/Paris',
        eventParticipants: participants,
        ...extra,
      })
    await send(alice, target, 'march kick-off', {
      event: event(
        '2030-03-01T09:00:00Z',
        '2030-03-01T10:00:00Z',
        [{ id: alice.user.id }, { id: bob.user.id }],
        {
          isBusy: true,
          reminderData: {
            email: true,
            sms: false,
            alarmMobile: true,
            time: 600,
            remindermember: 1,
          },
        }
      ),
    })
    await send(alice, target, 'march review', {
      event: event('2030-03-15T14:00:00Z', '2030-03-15T15:00:00Z', [{ id: alice.user.id }]),
    })
    await send(bob, target, 'april holidays', {
      event: event('2030-04-01T00:00:00Z', '2030-04-05T00:00:00Z', [{ id: bob.code }], {
        eventAllDay: true,
      }),
    })
    await send(alice, target, 'no event here')
    const listed = await alice.call({ req: 'getBookEvents', ...target })
    ids = Object.fromEntries(listed.bookEvents.map((entry: any) => [entry.msg, entry.id]))
  })

  test('sendMsg stores the 2.9 event; getBookMessages answers it with the message', async ({
    assert,
  }) => {
    const messages = pick(await bob.call({ req: 'getBookMessages', ...target }), 'bookMessages')
    const kickoff = messages.find((message: any) => message.msg === 'march kick-off')
    assert.deepEqual(kickoff.event, {
      eventStart: at('2030-03-01T09:00:00Z'),
      eventEnd: at('2030-03-01T10:00:00Z'),
      eventTimezone: 'Europe/Paris',
      eventAllDay: false,
      isBusy: true,
      eventParticipants: [
        { id: alice.user.id, u_c: alice.code },
        { id: bob.user.id, u_c: bob.code },
      ].sort((a, b) => a.id - b.id),
      reminderData: {
        email: true,
        sms: false,
        alarmMobile: true,
        alarm: false,
        time: 600,
        remindermember: 1,
      },
    })
    assert.notProperty(
      messages.find((message: any) => message.msg === 'no event here'),
      'event'
    )
  })

  test('getBookEvents: all events by start time, with the wire fields', async ({ assert }) => {
    const answer = await bob.call({ req: 'getBookEvents', ...target })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.strictEqual(answer.b_c, target.b_c)
    assert.deepEqual(
      answer.bookEvents.map((entry: any) => entry.msg),
      ['march kick-off', 'march review', 'april holidays']
    )
    const holidays = answer.bookEvents[2]
    assert.strictEqual(holidays.u_c, bob.code)
    assert.strictEqual(holidays.eventAllDay, true)
    assert.strictEqual(holidays.b_o, target.b_o)
    assert.isNumber(holidays.smid)
    assert.isNumber(holidays.sstamp)
    assert.strictEqual(holidays.del, false)
  })

  test('dateMin and dateMax keep events overlapping those whole days', async ({ assert }) => {
    const march = await bob.call({
      req: 'getBookEvents',
      ...target,
      dateMin: '2030-03-01',
      dateMax: '2030-03-31',
    })
    assert.deepEqual(
      march.bookEvents.map((entry: any) => entry.msg),
      ['march kick-off', 'march review']
    )
    const overlap = await bob.call({ req: 'getBookEvents', ...target, dateMin: '2030-04-03' })
    assert.deepEqual(
      overlap.bookEvents.map((entry: any) => entry.msg),
      ['april holidays']
    )
    const day = await bob.call({
      req: 'getBookEvents',
      ...target,
      dateMin: '2030-03-15',
      dateMax: '2030-03-15',
    })
    assert.deepEqual(
      day.bookEvents.map((entry: any) => entry.msg),
      ['march review']
    )
    expectNok(
      assert,
      await bob.call({ req: 'getBookEvents', ...target, dateMin: '15/03/2030' }),
      'INVALID_PARAMETER'
    )
  })

  test('limit and page', async ({ assert }) => {
    const second = await bob.call({ req: 'getBookEvents', ...target, limit: 1, page: 2 })
    assert.deepEqual(
      second.bookEvents.map((entry: any) => entry.msg),
      ['march review']
    )
    expectNok(
      assert,
      await bob.call({ req: 'getBookEvents', ...target, limit: 0 }),
      'INVALID_PARAMETER'
    )
  })

  test('events_ids and participants', async ({ assert }) => {
    const byIds = await bob.call({
      req: 'getBookEvents',
      ...target,
      events_ids: `${ids['march review']},${ids['april holidays']}`,
    })
    assert.deepEqual(
      byIds.bookEvents.map((entry: any) => entry.msg),
      ['march review', 'april holidays']
    )
    const json = await bob.call({
      req: 'getBookEvents',
      ...target,
      events_ids: JSON.stringify([ids['march kick-off']]),
    })
    assert.deepEqual(
      json.bookEvents.map((entry: any) => entry.msg),
      ['march kick-off']
    )
    const withBob = await bob.call({ req: 'getBookEvents', ...target, participants: bob.code })
    assert.deepEqual(
      withBob.bookEvents.map((entry: any) => entry.msg),
      ['march kick-off', 'april holidays']
    )
    const byUserId = await bob.call({
      req: 'getBookEvents',
      ...target,
      participants: String(alice.user.id),
    })
    assert.deepEqual(
      byUserId.bookEvents.map((entry: any) => entry.msg),
      ['march kick-off', 'march review']
    )
    expectNok(
      assert,
      await bob.call({ req: 'getBookEvents', ...target, events_ids: 'abc' }),
      'INVALID_PARAMETER'
    )
  })

  test('an edit replaces the event, null removes it, deleting the message deletes it', async ({
    assert,
  }) => {
    const owner = await client()
    const place = await book(owner)
    const sent = await send(owner, place, 'moving', {
      event: { eventStart: at('2031-01-01T10:00:00Z'), eventEnd: at('2031-01-01T11:00:00Z') },
    })
    let events = pick(await owner.call({ req: 'getBookEvents', ...place }), 'bookEvents')
    assert.strictEqual(events[0].eventTimezone, 'UTC')
    await owner.call({
      req: 'sendMsg',
      ...place,
      msg_id: sent.createMessageId,
      event: JSON.stringify({ eventStart: at('2031-02-01T10:00:00Z') }),
    })
    events = pick(await owner.call({ req: 'getBookEvents', ...place }), 'bookEvents')
    assert.strictEqual(events[0].eventStart, at('2031-02-01T10:00:00Z'))
    assert.strictEqual(events[0].eventEnd, at('2031-02-01T10:00:00Z'))
    await owner.call({ req: 'sendMsg', ...place, msg_id: sent.createMessageId, event: 'null' })
    assert.deepEqual(pick(await owner.call({ req: 'getBookEvents', ...place }), 'bookEvents'), [])
    await owner.call({
      req: 'sendMsg',
      ...place,
      msg_id: sent.createMessageId,
      event: JSON.stringify({ eventStart: '2031-03-01T10:00:00Z' }),
    })
    assert.lengthOf(pick(await owner.call({ req: 'getBookEvents', ...place }), 'bookEvents'), 1)
    await owner.call({ req: 'deleteMsg', ...place, msg_id: sent.createMessageId })
    assert.deepEqual(pick(await owner.call({ req: 'getBookEvents', ...place }), 'bookEvents'), [])
  })

  test('bad events are refused without writing the message', async ({ assert }) => {
    const eve = await client()
    const cases = [
      'not json',
      JSON.stringify({ eventEnd: 5 }),
      JSON.stringify({ eventStart: 'someday' }),
      JSON.stringify({ eventStart: 100, eventEnd: 50 }),
      JSON.stringify({ eventStart: 100, eventTimezone: 'Mars/Olympus' }),
      JSON.stringify({ eventStart: 100, eventParticipants: [{ id: eve.user.id }] }),
      JSON.stringify({ eventStart: 100, reminderData: { time: -5 } }),
    ]
    const before = pick(
      await alice.call({ req: 'getBookMessages', ...target, nbMax: 100 }),
      'bookMessages.length'
    )
    for (const event of cases) {
      expectNok(
        assert,
        await alice.call({ req: 'sendMsg', ...target, msg: 'bad', event }),
        'INVALID_PARAMETER'
      )
    }
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...target, nbMax: 100 }), 'bookMessages'),
      before
    )
  })

  test('the event in PHP bracket form', async ({ assert }) => {
    const owner = await client()
    const place = await book(owner)
    const answer = await owner.call({
      req: 'sendMsg',
      ...place,
      msg: 'bracket',
      event: {
        eventStart: '1900000000',
        eventEnd: '1900003600',
        isBusy: 'TRUE',
        eventParticipants: { 0: { id: String(owner.user.id) } },
      },
    })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    const [event] = pick(await owner.call({ req: 'getBookEvents', ...place }), 'bookEvents')
    assert.strictEqual(event.isBusy, true)
    assert.deepEqual(event.eventParticipants, [{ id: owner.user.id, u_c: owner.code }])
  })

  test('bracket-form objects where a scalar is expected are refused, not failed', async ({
    assert,
  }) => {
    // PHP bracket form makes objects without a prototype: String() and Number() throw on them.
    const nested = { a: '1', b: { c: '2' } }
    for (const params of [
      { req: 'getBookEvents', events_ids: nested },
      { req: 'getBookEvents', participants: { 0: { id: { c: '2' } } } },
      { req: 'sendMsg', msg: 'nested start', event: { eventStart: nested } },
      { req: 'sendMsg', msg: 'nested zone', event: { eventStart: '100', eventTimezone: nested } },
      {
        req: 'sendMsg',
        msg: 'nested time',
        event: { eventStart: '100', reminderData: { time: nested } },
      },
      {
        req: 'sendMsg',
        msg: 'nested participant',
        event: { eventStart: '100', eventParticipants: { 0: { id: nested } } },
      },
      { req: 'markBooksMessagesAsRead', books: { 0: { b_o: nested, b_c: 'x' } } },
      { req: 'updateBookUserPrefs', userPrefs: { maxMsgsOffline: nested } },
      { req: 'updateBook', ownerPrefs: { oCoverUseLastImg: nested } },
    ]) {
      const { req, ...rest } = params
      const named = req === 'markBooksMessagesAsRead' ? {} : target
      expectNok(assert, await alice.call({ req, ...named, ...rest }), 'INVALID_PARAMETER')
    }
  })

  test('non-members see nothing; hideEvents sessions are refused', async ({ assert }) => {
    const eve = await client()
    expectNok(assert, await eve.call({ req: 'getBookEvents', ...target }), 'NOT_FOUND')
    const hidden = await sessionOf(alice, 'hideEvents')
    expectNok(assert, await hidden.call({ req: 'getBookEvents', ...target }), 'RESTRICTED_SESSION')
  })
})
