import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'

/** The Inertia version the server announces: the md5 of the build's manifest ('1' without a build). */
function assetsVersion() {
  try {
    const manifest = readFileSync(app.makePath('public/assets/.vite/manifest.json'), 'utf8')
    return createHash('md5').update(manifest).digest('hex')
  } catch {
    return '1'
  }
}

export interface ConsoleAnswer {
  status: number
  location: string | null
  text: string
  headers: Headers
  /** The Inertia page of an Inertia answer (component and props), when there is one. */
  page: {
    component: string
    props: Record<string, any>
    url: string
    encryptHistory?: boolean
    clearHistory?: boolean
  } | null
}

/**
 * A browser-like client of the console over real HTTP: keeps cookies, sends
 * the XSRF token back as Inertia's axios does, never follows redirects.
 */
export class ConsoleClient {
  private cookies = new Map<string, string>()

  private cookieHeader() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  private remember(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at).trim()
      const value = pair.slice(at + 1).trim()
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '')
        this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  async request(
    method: string,
    path: string,
    options: {
      body?: Record<string, unknown>
      inertia?: boolean
      csrf?: boolean
      /** A partial reload (Inertia's `only`): the page's component and the props to reload. */
      only?: { component: string; props: string[] }
    } = {}
  ): Promise<ConsoleAnswer> {
    const headers: Record<string, string> = { accept: 'text/html, application/xhtml+xml' }
    if (this.cookies.size) headers.cookie = this.cookieHeader()
    if (options.inertia ?? true) {
      headers['x-inertia'] = 'true'
      headers['x-inertia-version'] = assetsVersion()
      headers['x-requested-with'] = 'XMLHttpRequest'
      headers.accept = 'text/html, application/xhtml+xml'
    }
    if (options.only) {
      headers['x-inertia-partial-component'] = options.only.component
      headers['x-inertia-partial-data'] = options.only.props.join(',')
    }
    const xsrf = this.cookies.get('XSRF-TOKEN')
    if (xsrf && options.csrf !== false) headers['x-xsrf-token'] = decodeURIComponent(xsrf)
    let body: string | undefined
    if (options.body) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(options.body)
    }
    const response = await fetch(`${serverUrl()}${path}`, {
      method,
      headers,
      body,
      redirect: 'manual',
    })
    this.remember(response)
    const text = await response.text()
    let page: ConsoleAnswer['page'] = null
    if (response.headers.get('x-inertia') === 'true') page = JSON.parse(text)
    else if (response.headers.get('content-type')?.startsWith('text/html')) {
      const match = /data-page="([^"]*)"/.exec(text)
      if (match) page = JSON.parse(match[1].replaceAll('&quot;', '"').replaceAll('&amp;', '&'))
    }
    return {
      status: response.status,
      location: response.headers.get('location'),
      text,
      headers: response.headers,
      page,
    }
  }

  get(
    path: string,
    options: { inertia?: boolean; only?: { component: string; props: string[] } } = {}
  ) {
    return this.request('GET', path, options)
  }

  post(path: string, body: Record<string, unknown> = {}, options: { csrf?: boolean } = {}) {
    return this.request('POST', path, { body, ...options })
  }

  /** Loads the sign-in page (cookies, XSRF token) and signs in with a password. */
  async signIn(login: string, password: string) {
    await this.get('/admin/login')
    return this.post('/admin/login', { login, password })
  }
}

/** A new administrator, signed in to the console (password only: no second factor is required). */
export async function signedInAdmin() {
  const admin = await makeUser({ isAdmin: true })
  const client = new ConsoleClient()
  const answer = await client.signIn(admin.email!, TEST_PASSWORD)
  if (answer.location !== '/admin')
    throw new Error(`sign-in failed: ${answer.status} ${answer.location}`)
  return { admin, client }
}

/** An Inertia visit that must answer a page (its component and props). */
export async function pageOf(
  client: ConsoleClient,
  path: string,
  options: { only?: { component: string; props: string[] } } = {}
) {
  const answer = await client.get(path, options)
  if (answer.status !== 200 || !answer.page)
    throw new Error(`${path}: ${answer.status} ${answer.text.slice(0, 200)}`)
  return answer.page
}
