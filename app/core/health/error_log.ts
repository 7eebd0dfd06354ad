import { hostname } from 'node:os'

/**
 * The last errors this process logged (level error and above), for the
 * console's Health page: captured by the logger itself (config/logger.ts,
 * pino's logMethod hook), so every `logger.error` — a failed request with its
 * reference, a job, a delivery — is there without its caller knowing. With
 * Redis, each entry is also pushed to a list every instance shares (see
 * `share`), so the page shows the fleet's.
 */

/** How many errors are kept (per process, and in the shared list). */
export const ERRORS_KEPT = 100

export interface LoggedError {
  /** Milliseconds since the epoch. */
  at: number
  /** The log line's message. */
  message: string
  /** The error's own message and class, when one was logged. */
  error?: string
  /** The reference a client was given for a failed request (its request id), when there is one. */
  reference?: string
  /** The request's URL or the operation, when logged. */
  where?: string
  /** Which instance logged it (host:pid). */
  instance: string
}

type Sink = (entry: LoggedError) => void

const recent: LoggedError[] = []
let sink: Sink | null = null
let instance = `${hostname()}:${process.pid}`

/** Called by the logger's hook for every line at level error (50) or above. Never throws. */
export function captureLogged(args: unknown[], bindings: Record<string, unknown> = {}) {
  try {
    const entry = describe(args, bindings)
    recent.unshift(entry)
    if (recent.length > ERRORS_KEPT) recent.length = ERRORS_KEPT
    sink?.(entry)
  } catch {
    // Recording an error must never become one.
  }
}

/** This process's newest errors, newest first. */
export function recentErrors(): LoggedError[] {
  return [...recent]
}

/** Where entries also go (the shared Redis list), and this instance's name. */
export function shareErrors(to: Sink | null, instanceName?: string) {
  sink = to
  if (instanceName) instance = instanceName
}

function describe(args: unknown[], bindings: Record<string, unknown>): LoggedError {
  const [first, second] = args
  const fields = first && typeof first === 'object' && !(first instanceof Error) ? first : {}
  const record = { ...bindings, ...(fields as Record<string, unknown>) }
  const err = first instanceof Error ? first : record.err
  const message = typeof first === 'string' ? first : typeof second === 'string' ? second : 'error'
  const where = record.url ?? record.operation ?? record.req ?? record.job
  return {
    at: Date.now(),
    message: bounded(message, 300),
    ...(err instanceof Error ? { error: bounded(`${err.name}: ${err.message}`, 500) } : {}),
    ...(typeof record.reference === 'string' ? { reference: record.reference } : {}),
    ...(typeof where === 'string' ? { where: bounded(where, 300) } : {}),
    instance,
  }
}

const bounded = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text)
