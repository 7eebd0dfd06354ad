import { QuireClient } from '#client/index'

/** An api.php call on another server process, answering the envelope. */
export type ServerCall = (
  req: string,
  params?: Record<string, unknown>
) => Promise<Record<string, any>>

/**
 * api.php on a server process a test started (bench/lib/quire_process.ts's
 * startQuire), as a session: a form POST with o_u, u_c and sesskey, through
 * the typed client's call() (resources/client; no retry, no version).
 */
export function callerOn(base: string, session: { o_u: string; sesskey: string }): ServerCall {
  const client = new QuireClient({ baseUrl: base, retries: 0, version: null })
  client.useSession({ o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey })
  return (req, params = {}) => client.call(req, params)
}
