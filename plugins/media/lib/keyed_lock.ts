/**
 * Runs tasks with the same key one after another (in this process): two
 * uploads to one message or cell append to its list in turn, never from the
 * same stale copy.
 */
export class KeyedLock {
  private tails = new Map<string, Promise<unknown>>()

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    const current = previous.then(task, task)
    const tail = current.catch(() => {})
    this.tails.set(key, tail)
    try {
      return await current
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}
