import { test } from '@japa/runner'
import { ALL_FORMS, type Form } from '#tests/helpers/rpc'
import { pool } from '#tests/helpers/pool'
import {
  HOSTILE_VALUES,
  answerProblems,
  credentials,
  fingerprint,
  makeWorld,
  parametersOf,
  registry,
  send,
  settled,
  watchErrors,
  type Hostile,
} from './fuzz_kit.js'

/**
 * npm run test:fuzz — every registered api.php operation (read from the
 * plugin registry, so a new one is covered the day it lands) gets hostile
 * values in each of its parameters, over every transport. Every answer must
 * be HTTP 200 JSON: ok, or a nok with a documented code (never
 * INTERNAL_ERROR), with no stack or path; a rejected write leaves every table
 * as it was; nothing reaches the server's error log.
 */

/** The keys every authenticated call carries: read by the shared pipeline, fuzzed with fewer values. */
const CREDENTIALS = ['o_u', 'u_c', 'sesskey', 'version']
const CREDENTIAL_VALUES = new Set(['missing', 'array', 'object', 'huge', 'NUL', 'SQL', 'deep'])

interface Case {
  name: string
  hostile: Hostile
  form: Form
}

function casesOf(names: string[]): Case[] {
  const cases: Case[] = []
  names.forEach((name, nameIndex) => {
    HOSTILE_VALUES.forEach((hostile, valueIndex) => {
      if (CREDENTIALS.includes(name) && !CREDENTIAL_VALUES.has(hostile.name)) return
      // Nested values in the two forms that carry them (bracket and JSON); other values over one
      // transport each, rotating, so every parameter meets every transport.
      const forms: Form[] = hostile.raw
        ? ['urlencoded']
        : hostile.name === 'array' || hostile.name === 'object'
          ? ['urlencoded', 'json']
          : [ALL_FORMS[(nameIndex + valueIndex) % ALL_FORMS.length]]
      for (const form of forms) cases.push({ name, hostile, form })
    })
  })
  return cases
}

const loaded = await registry()
const operations = [...loaded.operations.keys()].sort()

test.group(
  'fuzz: every api.php operation answers hostile parameters with a documented nok',
  (group) => {
    let errors: Awaited<ReturnType<typeof watchErrors>>
    group.setup(async () => {
      errors = await watchErrors()
      return () => {
        errors.restore()
      }
    })

    test('control: the fingerprint counts the rows of the world’s own table', async ({
      assert,
    }) => {
      const world = await makeWorld()
      const own = (print: string) =>
        print.split(',').find((line) => line.startsWith(`tt_${world.valid.catId}:`))
      const before = await fingerprint(world)
      assert.match(own(before) ?? '', /^tt_\d+:1:\d+$/)
      const answer = await send(
        {
          req: 'createOrUpdateTableRows',
          ...credentials(world.session),
          b_o: world.book.b_o,
          rows: JSON.stringify({ tmp1: { [String(world.valid.fieldId)]: 'b' } }),
        },
        'urlencoded'
      )
      assert.equal(answer.body.status, 'ok', answer.text)
      await settled()
      assert.match(own(await fingerprint(world)) ?? '', /^tt_\d+:2:\d+$/)
    })

    for (const req of operations) {
      test(req, async ({ assert }) => {
        const { default: Operation } = await loaded.operations.get(req)!.load()
        // A world of its own: what an accepted hostile request creates or deletes stays there.
        const world = await makeWorld()
        const names = [...new Set([...CREDENTIALS, ...parametersOf(Operation.validator)])]
        const base: Record<string, unknown> = { req, ...credentials(world.session) }
        for (const name of names)
          if (world.valid[name] !== undefined) base[name] = world.valid[name]
        errors.take()

        const failures: string[] = []
        // The tables as the last request left them (writes only).
        let current = Operation.writes ? await fingerprint(world) : ''
        const runCase = async ({ name, hostile, form }: Case) => {
          const params = { ...base }
          if (hostile.value === undefined) delete params[name]
          else params[name] = hostile.value
          let answer: Awaited<ReturnType<typeof send>>
          try {
            answer = await send(params, form, hostile.raw)
          } catch (error) {
            const cause = (error as { cause?: { code?: string; message?: string } }).cause
            failures.push(
              `${name}=${hostile.name} (${form}): no answer (${cause?.code ?? cause?.message ?? error})`
            )
            return
          }
          const problems = answerProblems(answer)
          if (Operation.writes) {
            await settled()
            const after = await fingerprint(world)
            if (answer.body.status === 'nok' && after !== current)
              problems.push('a rejected request wrote')
            current = after
          }
          if (problems.length)
            failures.push(
              `${name}=${hostile.name} (${form}): ${problems.join(', ')} — ${answer.text.slice(0, 160)}`
            )
        }
        // Writes one at a time, so a change can be traced to the request that made it.
        await pool(casesOf(names), Operation.writes ? 1 : 4, runCase)
        assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`)
        assert.deepEqual(errors.take().slice(0, 3), [], 'errors in the server log')
      }).timeout(600_000)
    }
  }
)
