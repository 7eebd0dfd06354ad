import { serverUrl } from './server.js'

export type Form = 'urlencoded' | 'query' | 'get' | 'json' | 'multipart'

export interface RpcAnswer {
  status: number
  contentType: string | null
  body: Record<string, any>
  text: string
}

/** Every way real clients send parameters (docs/spec/client-facts.md, "Transport"). */
export const ALL_FORMS: Form[] = ['get', 'query', 'urlencoded', 'json', 'multipart']

/** PHP bracket form of nested values: {a: {b: 1}} -> [['a[b]', '1']]. */
export function bracketPairs(params: Record<string, unknown>, prefix = ''): [string, string][] {
  const pairs: [string, string][] = []
  for (const [key, value] of Object.entries(params)) {
    const name = prefix ? `${prefix}[${key}]` : key
    if (value !== null && typeof value === 'object')
      pairs.push(...bracketPairs(value as Record<string, unknown>, name))
    else if (value !== undefined) pairs.push([name, String(value ?? '')])
  }
  return pairs
}

/**
 * Calls api.php over real HTTP. `form` picks the transport: GET with a query
 * string, POST with everything in the query string and an empty body,
 * urlencoded, JSON or multipart body.
 */
export async function rpc(
  params: Record<string, unknown>,
  form: Form = 'urlencoded',
  path = '/live/api.php'
) {
  const pairs = bracketPairs(params)
  const search = new URLSearchParams(pairs).toString()
  let url = `${serverUrl()}${path}`
  const init: RequestInit = { method: 'POST' }
  switch (form) {
    case 'get':
      init.method = 'GET'
      url += `?${search}`
      break
    case 'query':
      url += `?${search}`
      break
    case 'urlencoded':
      init.headers = { 'Content-Type': 'application/x-www-form-urlencoded' }
      init.body = search
      break
    case 'json':
      init.headers = { 'Content-Type': 'application/json' }
      init.body = JSON.stringify(params)
      break
    case 'multipart': {
      const data = new FormData()
      for (const [key, value] of pairs) data.append(key, value)
      init.body = data
      break
    }
  }
  return answerOf(await fetch(url, init))
}

/** An api.php response as tests read it (a body that is not JSON is kept as `unparsable`). */
export async function answerOf(response: Response): Promise<RpcAnswer> {
  const text = await response.text()
  let body: Record<string, any>
  try {
    body = JSON.parse(text)
  } catch {
    body = { unparsable: text }
  }
  return { status: response.status, contentType: response.headers.get('content-type'), body, text }
}
