import { QuireTransport, bracketPairs, type Form, type RawAnswer } from '#client/runtime'
import { serverUrl } from './server.js'

export type { Form }

export type RpcAnswer = RawAnswer

/** Every way real clients send parameters (docs/spec/client-facts.md, "Transport"). */
export const ALL_FORMS: Form[] = ['get', 'query', 'urlencoded', 'json', 'multipart']

export { bracketPairs }

let transport: { baseUrl: string; client: QuireTransport } | null = null

/**
 * The typed client's transport (resources/client) for this test server: every
 * helper's api.php call goes through it. No retries and no version added, so
 * each call is exactly one request with exactly the parameters given.
 */
export function testTransport(): QuireTransport {
  const baseUrl = serverUrl()
  if (transport?.baseUrl !== baseUrl) {
    transport = { baseUrl, client: new QuireTransport({ baseUrl, retries: 0, version: null }) }
  }
  return transport.client
}

/**
 * Calls api.php over real HTTP (through the typed client's transport). `form`
 * picks the transport: GET with a query string, POST with everything in the
 * query string and an empty body, urlencoded, JSON or multipart body.
 */
export async function rpc(
  params: Record<string, unknown>,
  form: Form = 'urlencoded',
  path = '/live/api.php'
): Promise<RpcAnswer> {
  return testTransport().send(params, { form, path })
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
