import { test } from '@japa/runner'
import WebSocket from 'ws'
import type { VineValidator } from '@vinejs/vine'
import { CloseCode } from '#core/socket/protocol'
import { serverUrl } from '#tests/helpers/server'
import { ensureSocketEndpoint } from '../functional/socket/socket_client.js'
import {
  DOCUMENTED_CODES,
  HOSTILE_VALUES,
  LEAK,
  credentials,
  fingerprint,
  makeWorld,
  parametersOf,
  registry,
  settled,
  watchErrors,
  type Hostile,
} from './fuzz_kit.js'

/**
 * npm run test:fuzz, socket half — every socket message type and system
 * message (read from the plugin registry) and the kernel's attach and ping
 * get hostile values in each field. Every answer is ok or a nok with a
 * documented code (never INTERNAL_ERROR), without stack or path; a connection
 * closes only with a documented close code; a refused frame writes nothing;
 * nothing reaches the server's error log.
 */

const CREDENTIALS = ['o_u', 'u_c', 'sesskey']
const CLOSE_CODES = new Set<number>(Object.values(CloseCode))
/** Frames per connection: far below the rate limit's burst, so no case meets the flood rules. */
const CASES_PER_CONNECTION = 8

interface Target {
  name: string
  frame: Record<string, unknown>
  validator?: VineValidator<any, any>
  writes: boolean
}

/** A connection that answers, for one frame, every frame the server sent before the ping after it. */
class Probe {
  private frames: Record<string, any>[] = []
  private waiting: ((frame: Record<string, any>) => void) | null = null
  closeCode: number | null = null

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      let frame: Record<string, any>
      try {
        frame = JSON.parse(data.toString())
      } catch {
        frame = { unparsable: data.toString().slice(0, 200) }
      }
      if (frame.type === 10 && this.waiting) return this.waiting(frame)
      this.frames.push(frame)
    })
    ws.on('close', (code) => {
      this.closeCode = code
      this.waiting?.({ closed: code })
    })
  }

  static async open() {
    const ws = new WebSocket(`${serverUrl().replace(/^http/, 'ws')}/live/socket`)
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('error', reject)
    })
    return new Probe(ws)
  }

  /** Sends `frame` then a valid ping; answers what came before the pong (or the close). */
  async exchange(frame: unknown, ping: Record<string, unknown>) {
    this.frames = []
    const done = new Promise<Record<string, any>>((resolve) => (this.waiting = resolve))
    this.ws.send(JSON.stringify(frame))
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ ...ping, type: 9 }))
    const timeout = new Promise<Record<string, any>>((resolve) =>
      setTimeout(() => resolve({ timeout: true }), 10_000)
    )
    const end = await Promise.race([done, timeout])
    this.waiting = null
    return { answers: this.frames, end }
  }

  close() {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close()
  }
}

function problemsOf(answers: Record<string, any>[], end: Record<string, any>) {
  const problems: string[] = []
  if (end.timeout) problems.push('no answer within 10 s')
  if (end.closed !== undefined && !CLOSE_CODES.has(end.closed))
    problems.push(`closed with undocumented code ${end.closed}`)
  for (const answer of answers) {
    if ('unparsable' in answer) problems.push('a frame that is not JSON')
    if (answer.status === 'nok') {
      if (!DOCUMENTED_CODES.has(answer.errorCode))
        problems.push(`undocumented errorCode ${answer.errorCode}`)
      if (answer.errorCode === 'INTERNAL_ERROR') problems.push('INTERNAL_ERROR')
    }
    if (LEAK.test(JSON.stringify(answer))) problems.push('stack or path in a frame')
  }
  return problems
}

const loaded = await registry()

async function listTargets(): Promise<Target[]> {
  const list: Target[] = [
    { name: 'attach (7)', frame: { type: 7, version: '6.49' }, writes: false },
    { name: 'attach (4)', frame: { type: 4, version: '6.49' }, writes: false },
  ]
  for (const [type, claim] of [...loaded.socketTypes.entries()].sort(([a], [b]) => a - b)) {
    const { default: Handler } = (await claim.load()) as { default: any }
    list.push({ name: `type ${type}`, frame: { type }, validator: Handler.validator, writes: true })
  }
  for (const [msg, claim] of [...loaded.systemMessages.entries()].sort()) {
    const { default: Handler } = (await claim.load()) as { default: any }
    list.push({
      name: `system message ${msg}`,
      frame: { type: 11, msg, uuid: 'fuzz' },
      validator: Handler.validator,
      writes: true,
    })
  }
  return list
}

const targets = await listTargets()

test.group('fuzz: every socket message answers hostile fields with a documented nok', (group) => {
  let errors: Awaited<ReturnType<typeof watchErrors>>
  group.setup(async () => {
    await ensureSocketEndpoint()
    errors = await watchErrors()
    return () => {
      errors.restore()
    }
  })

  for (const target of targets) {
    test(target.name, async ({ assert }) => {
      const world = await makeWorld()
      const keys = credentials(world.session)
      const names = [...new Set([...CREDENTIALS, ...parametersOf(target.validator)])].filter(
        (name) => name !== 'type'
      )
      const base: Record<string, unknown> = { ...keys, ...target.frame }
      for (const name of names) if (world.valid[name] !== undefined) base[name] = world.valid[name]
      errors.take()

      const cases: { name: string; hostile: Hostile }[] = []
      for (const name of names)
        for (const hostile of HOSTILE_VALUES) if (!hostile.raw) cases.push({ name, hostile })

      const failures: string[] = []
      // The tables as the last frame left them (writes only).
      let current = target.writes ? await fingerprint(world) : ''
      let probe: Probe | null = null
      let used = 0
      for (const { name, hostile } of cases) {
        if (!probe || probe.closeCode !== null || used === CASES_PER_CONNECTION) {
          probe?.close()
          probe = await Probe.open()
          used = 0
        }
        used++
        const frame = { ...base }
        if (hostile.value === undefined) delete frame[name]
        else frame[name] = hostile.value
        const { answers, end } = await probe.exchange(frame, keys)
        const problems = problemsOf(answers, end)
        if (target.writes) {
          await settled()
          const after = await fingerprint(world)
          const refused = answers.some((answer) => answer.status === 'nok') || end.closed
          if (refused && after !== current) problems.push('a refused frame wrote')
          current = after
        }
        if (problems.length)
          failures.push(
            `${name}=${hostile.name}: ${problems.join(', ')} — ${JSON.stringify(answers).slice(0, 160)}`
          )
      }
      probe?.close()
      assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`)
      assert.deepEqual(errors.take().slice(0, 3), [], 'errors in the server log')
    }).timeout(600_000)
  }
})
