import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { ensureConsoleBuilt } from '#admin/build'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { ConsoleClient, signedInAdmin } from '../admin/console_client.js'
import { audit } from './helpers.js'

/** `count` entries of a kind of their own (a tag no other test uses), the last one newest. */
async function seed(tag: string, count: number) {
  for (let index = 0; index < count; index++)
    await audit.record({
      actor: {
        userId: null,
        code: index % 2 ? `odd-${tag}` : `even-${tag}`,
        address: 'cli',
      },
      kind: `test.${tag}`,
      target: { type: 'test', id: index, label: `entry ${index} of ${tag}` },
      changes: { position: { from: null, to: index }, token: { from: 'hidden', to: 'x' } },
    })
}

async function auditPage(client: ConsoleClient, query: string) {
  const answer = await client.get(`/admin/audit${query}`)
  if (!answer.page) throw new Error(`no page: ${answer.status} ${answer.location}`)
  return answer.page
}

test.group('audit log: the console page and its CSV', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => resetAuthState())

  test('paged on the server, newest first; a page past the last shows the last', async ({
    assert,
  }) => {
    const tag = `paging${Date.now().toString(36)}`
    await seed(tag, 120)
    const { client } = await signedInAdmin()
    const first = await auditPage(client, `?kind=test.${tag}`)
    assert.equal(first.component, 'audit')
    const { entries } = first.props
    assert.equal(entries.total, 120)
    assert.equal(entries.page, 1)
    assert.lengthOf(entries.items, 50)
    assert.equal(entries.items[0].target, `entry 119 of ${tag}`)
    assert.equal(entries.items[0].what, `test.${tag}`)
    assert.equal(entries.items[0].changes, 'Position: (none) → 119; Token: changed')
    const second = await auditPage(client, `?kind=test.${tag}&page=2`)
    assert.equal(second.props.entries.items[0].target, `entry 69 of ${tag}`)
    const past = await auditPage(client, `?kind=test.${tag}&page=999`)
    assert.equal(past.props.entries.page, 3)
    assert.lengthOf(past.props.entries.items, 20)
    assert.equal(past.props.entries.items.at(-1).target, `entry 0 of ${tag}`)
  })

  test('search, filter by who and kind, bad filters ignored', async ({ assert }) => {
    const tag = `filter${Date.now().toString(36)}`
    await seed(tag, 10)
    const { client } = await signedInAdmin()
    const byActor = await auditPage(client, `?kind=test.${tag}&actor=odd-${tag}`)
    assert.equal(byActor.props.entries.total, 5)
    assert.isTrue(byActor.props.entries.items.every((entry: any) => entry.actor === `odd-${tag}`))
    const searched = await auditPage(client, `?search=${encodeURIComponent(`entry 7 of ${tag}`)}`)
    assert.equal(searched.props.entries.total, 1)
    assert.equal(searched.props.filter.search, `entry 7 of ${tag}`)
    const nothing = await auditPage(client, `?kind=test.${tag}&actor=nobody-${tag}`)
    assert.equal(nothing.props.entries.total, 0)
    assert.equal(nothing.props.entries.page, 1)
    // A kind that is not a kind, or a day that is not a day, is no filter (never an error page).
    const bad = await client.get(
      `/admin/audit?kind=${encodeURIComponent("x' OR 1=1")}&from=yesterday&page=-4`
    )
    assert.equal(bad.status, 200)
    assert.equal(bad.page!.props.filter.kind, '')
    assert.equal(bad.page!.props.entries.page, 1)
    const today = new Date().toISOString().slice(0, 10)
    const dated = await auditPage(client, `?kind=test.${tag}&from=${today}&to=${today}`)
    assert.equal(dated.props.entries.total, 10)
    const before = await auditPage(client, `?kind=test.${tag}&to=2020-01-01`)
    assert.equal(before.props.entries.total, 0)
  })

  test('CSV export: text/csv, streamed, with the filter, secrets only as "changed"', async ({
    assert,
  }) => {
    const tag = `csv${Date.now().toString(36)}`
    await seed(tag, 1205)
    const { client } = await signedInAdmin()
    const answer = await client.get(`/admin/audit.csv?kind=test.${tag}`, { inertia: false })
    assert.equal(answer.status, 200)
    assert.match(answer.headers.get('content-type')!, /^text\/csv/)
    assert.match(answer.headers.get('content-disposition')!, /attachment; filename="audit-log-/)
    const lines = answer.text.trimEnd().split('\r\n')
    assert.equal(lines[0], 'id,at,actor_id,actor,address,kind,target_type,target_id,target,changes')
    assert.lengthOf(lines, 1206)
    assert.include(lines[1], `entry 1204 of ${tag}`)
    assert.include(lines.at(-1)!, `entry 0 of ${tag}`)
    assert.include(lines[1], 'token: changed')
    assert.notInclude(answer.text, 'hidden')
    const odd = await client.get(`/admin/audit.csv?kind=test.${tag}&actor=odd-${tag}`, {
      inertia: false,
    })
    assert.lengthOf(odd.text.trimEnd().split('\r\n'), 1 + 602)
  })

  test('only administrators with the Users right see it; others get no entry', async ({
    assert,
  }) => {
    const tag = `private${Date.now().toString(36)}`
    await seed(tag, 1)
    const outsider = new ConsoleClient()
    for (const path of [`/admin/audit?kind=test.${tag}`, `/admin/audit.csv?kind=test.${tag}`]) {
      const answer = await outsider.get(path, { inertia: false })
      assert.equal(answer.status, 303)
      assert.equal(answer.location, '/admin/login')
      assert.notInclude(answer.text, `entry 0 of ${tag}`)
    }
    const plain = await makeUser()
    const refused = await new ConsoleClient().signIn(plain.email!, TEST_PASSWORD)
    assert.notEqual(refused.location, '/admin')

    const { admin, client } = await signedInAdmin()
    await db
      .from('users')
      .where('id', admin.id)
      .update({ rights: JSON.stringify({ admin: false }) })
    const page = await client.get(`/admin/audit?kind=test.${tag}`)
    assert.equal(page.status, 403)
    assert.equal(page.page!.component, 'forbidden')
    assert.notProperty(page.page!.props, 'entries')
    const csv = await client.get(`/admin/audit.csv?kind=test.${tag}`, { inertia: false })
    assert.equal(csv.status, 403)
    assert.notInclude(csv.text, `entry 0 of ${tag}`)
    assert.notMatch(csv.headers.get('content-type') ?? '', /csv/)
  })

  test('retention: prune deletes entries older than AUDIT_RETENTION_DAYS, keeps the rest', async ({
    assert,
  }) => {
    const tag = `prune${Date.now().toString(36)}`
    await seed(tag, 2)
    const [older] = await db.from('audit_log').where('kind', `test.${tag}`).orderBy('id').limit(1)
    await db
      .from('audit_log')
      .where('id', older.id)
      .update({ created_at: Date.now() - 400 * 86_400_000 })
    const removed = await audit.prune()
    assert.isAtLeast(removed, 1)
    const left = await db.from('audit_log').where('kind', `test.${tag}`).select('id')
    assert.lengthOf(left, 1)
    assert.notEqual(Number(left[0].id), Number(older.id))
  })
})
