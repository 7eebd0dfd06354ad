/** An api.php call on another server process, answering the envelope. */
export type ServerCall = (
  req: string,
  params?: Record<string, unknown>
) => Promise<Record<string, any>>

/**
 * api.php on a server process a test started (bench/lib/quire_process.ts's
 * startQuire), as a session: a form POST with o_u, u_c and sesskey.
 */
export function callerOn(base: string, session: { o_u: string; sesskey: string }): ServerCall {
  return async (req, params = {}) => {
    const response = await fetch(`${base}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        req,
        o_u: session.o_u,
        u_c: session.o_u,
        sesskey: session.sesskey,
        ...Object.fromEntries(Object.entries(params).map(([key, value]) => [key, String(value)])),
      }).toString(),
    })
    return (await response.json()) as Record<string, any>
  }
}
