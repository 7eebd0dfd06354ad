export interface BackoffPolicy {
  /** Delay before the first retry. */
  baseMs: number
  /** Each further retry waits this many times longer... */
  factor: number
  /** ...up to this. */
  maxMs: number
  /** ± this fraction of randomness, so that failures at one moment do not retry in one burst. */
  jitter: number
}

/** The delay before attempt `attempt + 1`, after `attempt` attempts failed (attempt >= 1). */
export function retryDelay(policy: BackoffPolicy, attempt: number, random = Math.random): number {
  const plain = Math.min(policy.baseMs * policy.factor ** Math.max(0, attempt - 1), policy.maxMs)
  const spread = plain * policy.jitter
  return Math.max(0, Math.round(plain - spread + random() * 2 * spread))
}

/** The schedule without jitter: the delay before each retry, for docs and the console. */
export function schedule(policy: BackoffPolicy, maxAttempts: number): number[] {
  const delays: number[] = []
  for (let attempt = 1; attempt < maxAttempts; attempt++)
    delays.push(retryDelay(policy, attempt, () => 0.5))
  return delays
}
