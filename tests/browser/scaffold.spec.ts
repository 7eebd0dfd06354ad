import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises'
import { statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { startQuire, type QuireProcess } from '../../bench/lib/quire_process.js'
import { generate } from 'otplib'
import { hasChromium, launch, noChromium, shot } from './chromium.js'

const run = promisify(execFile)

/** The plugin the test scaffolds, and what its page and navigation entry are called. */
const PLUGIN = 'scaffold_probe'
const LABEL = 'ScaffoldProbe'

/**
 * A throwaway copy of this checkout: the files git knows (tracked, and new
 * ones it does not ignore) as they are in the working tree, and a link to
 * node_modules. No build, no data: what a fresh clone has after npm install.
 */
async function copyCheckout(root: string): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), 'quire-scaffold-'))
  const { stdout } = await run(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 }
  )
  for (const path of new Set(stdout.split('\0').filter(Boolean))) {
    // A file deleted in the working tree is still listed as tracked.
    if (!statSync(join(root, path), { throwIfNoEntry: false })?.isFile()) continue
    await mkdir(dirname(join(copy, path)), { recursive: true })
    await copyFile(join(root, path), join(copy, path))
  }
  await symlink(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir')
  return copy
}

/** `node ace ...` in the copy. */
const ace = (copy: string, env: NodeJS.ProcessEnv, ...args: string[]) =>
  run(process.execPath, ['ace', ...args], { cwd: copy, env, maxBuffer: 16 * 1024 * 1024 })

test.group('make:plugin: the scaffolded console page, end to end (Chromium)', () => {
  test('a plugin made by make:plugin shows its console page and navigation entry')
    .skip(!hasChromium, noChromium)
    .run(async ({ assert, cleanup }) => {
      const copy = await copyCheckout(app.makePath())
      let server: QuireProcess | null = null
      const browser = await launch()
      cleanup(async () => {
        await browser.close()
        await server?.stop()
        await rm(copy, { recursive: true, force: true })
      })

      // The copy runs as `npm start` would: its own SQLite data folder, no Redis, production mode.
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        DATA_DIR: join(copy, 'data'),
        DB_CONNECTION: 'sqlite',
        AUTH_TOTP_POLICY: 'optional',
      }
      for (const name of ['REDIS_HOST', 'SQLITE_FILE', 'APP_KEY', 'PORT']) delete env[name]

      await ace(copy, env, 'make:plugin', PLUGIN)
      assert.include(await readFile(join(copy, 'config/plugins.ts'), 'utf8'), `'${PLUGIN}'`)
      // npm start's first step: migrations (the plugin's too), the console's build, a demo admin.
      const setup = await ace(copy, env, 'quire:setup')
      // Production: the console requires TOTP of administrators, and says so with the credentials.
      assert.include(setup.stdout, 'two-factor:     required')
      const admin = JSON.parse(await readFile(join(copy, 'data/demo-admin.json'), 'utf8'))
      server = await startQuire(env, { root: copy })

      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
      const page = await context.newPage()
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      await page.goto(`${server.url}/admin/login`)
      await page.fill('input[name=login]', admin.email)
      await page.fill('input[name=password]', admin.password)
      await page.click('button[type=submit]')
      // The password alone does not open the console in production: enrolment first, with a QR
      // code made by the server (an SVG data URL) and the key, then the first code.
      const qr = page.locator('[data-testid=totp-qr]')
      await qr.waitFor()
      assert.match(String(await qr.getAttribute('src')), /^data:image\/svg\+xml;base64,/)
      const shown = await page.locator('[data-testid=totp-secret]').innerText()
      const secret = shown.trim()
      await shot(page, 'production-enrolment')
      await page.fill('input[name=code]', await generate({ secret }))
      await page.click('button[type=submit]')
      await page.waitForURL(`${server.url}/admin/account`)
      assert.equal(await page.locator('[data-testid=recovery-codes] li').count(), 10)
      await shot(page, 'production-recovery-codes')

      const entry = page.locator(`nav a[href="/admin/${PLUGIN}"]`)
      const label = await entry.innerText()
      assert.equal(label.trim(), LABEL)
      await entry.click()
      await page.waitForURL(`${server.url}/admin/${PLUGIN}`)
      const heading = page.locator('main h1')
      await heading.waitFor()
      const title = await heading.innerText()
      assert.equal(title.trim(), LABEL)
      assert.include(
        await page.locator('main').innerText(),
        `0 item(s) stored by the ${PLUGIN} plugin`
      )
      assert.equal(await page.title(), `${LABEL} · Quire console`)
      await shot(page, 'scaffolded-plugin')
      assert.deepEqual(errors, [])
      await context.close()
    })
    .timeout(300_000)
})
