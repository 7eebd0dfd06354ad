import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { OutboxService } from '#core/outbox/outbox_service'
import type { SenderMessage } from '#core/outbox/detached_sender'
import { SocketHub, type HubBus } from '#core/socket/hub'

/** How long a stopping sender waits for its sends in flight (their attempts are then written). */
const STOP_GRACE_MS = 8_000

/**
 * The web process's sender (docs/outbox.md, OUTBOX_SENDER=process): forked
 * by the web process when jobs run in-process (no Redis), it owns the
 * outbox pump, woken by kicks over the IPC channel, and relays the hub
 * messages its deliveries make (system messages, web alarms) to the web
 * process's sockets. It ends with its parent. Not meant to be run by hand.
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
    let stopping = false
    const stop = async () => {
      if (stopping) return
      stopping = true
      await outbox.pump.stop(STOP_GRACE_MS)
      await this.terminate()
    }
    process.on('message', (message: SenderMessage) => {
      if (message?.outbox === 'kick')
        outbox.run({ kick: Number(message.until) || 0, reclaim: message.reclaim === true })
    })
    // The web process is gone (or stops): so is its sender.
    process.once('disconnect', () => void stop())
    process.once('SIGTERM', () => void stop())
    process.once('SIGINT', () => void stop())

    // What is due now, and claims a previous sender left lapsed.
    outbox.pump.wake(0, true)
    send({ outbox: 'ready' })
  }
}
