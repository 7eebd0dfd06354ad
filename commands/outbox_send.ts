import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { OutboxService } from '#core/outbox/outbox_service'
import { sendHere } from '#core/outbox/outbox_pump'
import type { SenderMessage } from '#core/outbox/detached_sender'
import { SocketHub, type HubBus } from '#core/socket/hub'

/** How long a stopping sender waits for its sends in flight (their results still go back). */
const STOP_GRACE_MS = 8_000

/**
 * The web process's sending process (docs/outbox.md, OUTBOX_SENDER=process):
 * forked by the web process when jobs run in-process (no Redis), it runs the
 * sends the web process's pump hands it (each channel's `prepare` and
 * `send`) and answers each result; the claims and the log stay with the web
 * process. The hub messages its channels make (web alarms, gateway wake-ups)
 * and its kicks (a reminder's fan-out staged deliveries) go back over IPC.
 * It ends with its parent. Not meant to be run by hand.
 */
export default class OutboxSend extends BaseCommand {
  static commandName = 'outbox:send'
  static description = "The web process's delivery sender (forked by the web process; not by hand)"
  static options: CommandOptions = { startApp: true, staysAlive: true }

  async run() {
    if (!process.send) {
      this.logger.error(
        'outbox:send is started by the web process (OUTBOX_SENDER=process), which talks to it over IPC'
      )
      this.exitCode = 1
      process.exitCode = 1
      return this.terminate()
    }
    const send = (message: SenderMessage) => {
      if (process.connected) process.send!(message)
    }
    const hub = await this.app.container.make(SocketHub)
    const relay: HubBus = {
      publish: async (raw) => send({ outbox: 'hub', raw }),
      subscribe: () => {},
    }
    await hub.useBus(relay)
    const outbox = await this.app.container.make(OutboxService)
    outbox.forwardKicks((at, reclaim) => send({ outbox: 'kick', at, reclaim }))
    const logger = await this.app.container.make('logger')

    let inFlight = 0
    process.on('message', async (message: SenderMessage) => {
      if (message?.outbox !== 'send') return
      const { channel, deliveries } = message
      inFlight += deliveries.length
      const sends = await sendHere(outbox.channel(channel), channel, deliveries, logger)
      sends.forEach((sending, index) =>
        sending.then((result) => {
          inFlight--
          send({ outbox: 'ended', id: deliveries[index].id, result })
        })
      )
    })

    let stopping = false
    const stop = async () => {
      if (stopping) return
      stopping = true
      const deadline = Date.now() + STOP_GRACE_MS
      while (inFlight > 0 && process.connected && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20))
      await this.terminate()
    }
    // The web process is gone (or stops): so is its sender.
    process.once('disconnect', () => void stop())
    process.once('SIGTERM', () => void stop())
    process.once('SIGINT', () => void stop())
    send({ outbox: 'ready' })
  }
}
