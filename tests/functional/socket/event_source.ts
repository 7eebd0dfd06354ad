/**
 * A minimal EventSource for Node 20 (which has none), enough for
 * transmit-client in tests: GET with fetch, `data:` lines dispatched as
 * message events, open and error events, close().
 */
export class NodeEventSource extends EventTarget {
  readyState = 0
  private controller = new AbortController()

  constructor(readonly url: string | URL) {
    super()
    void this.run()
  }

  private async run() {
    try {
      const response = await fetch(this.url, {
        headers: { Accept: 'text/event-stream' },
        signal: this.controller.signal,
      })
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
      this.readyState = 1
      this.dispatchEvent(new Event('open'))
      const decoder = new TextDecoder()
      let buffer = ''
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n')
          if (data) this.dispatchEvent(new MessageEvent('message', { data }))
        }
      }
    } catch {
      // aborted by close(), or the server went away
    }
    if (this.readyState !== 2) this.dispatchEvent(new Event('error'))
    this.readyState = 2
  }

  close() {
    this.readyState = 2
    this.controller.abort()
  }
}
