import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { simpleParser, type ParsedMail } from 'mailparser'
import gatewaysConfig from '#plugins/gateways/config'

/** A mail the relay accepted: its envelope and the parsed message. */
export interface RelayedMail {
  from: string
  to: string[]
  mail: ParsedMail
  raw: string
}

export interface SmtpRelay {
  port: number
  received: RelayedMail[]
  /** Authentications seen (user, password), to check the configured account is used. */
  logins: { user: string; password: string }[]
  /** Recipients refused with 550 (a mailbox that does not exist). */
  refuse: Set<string>
  /** Recipients answered 451 (try again later) once each, then accepted. */
  deferOnce: Set<string>
  /** The mails received for an address. */
  to(address: string): RelayedMail[]
  close(): Promise<void>
}

/**
 * A local SMTP server (smtp-server, the real protocol) on 127.0.0.1 standing
 * for the relay Quire hands its mail to: it requires AUTH LOGIN/PLAIN with
 * the account given, refuses the recipients in `refuse` with 550, and keeps
 * what it accepts, parsed by mailparser.
 */
export async function startSmtpRelay(account = { user: 'quire', password: 'relay-secret' }) {
  const received: RelayedMail[] = []
  const logins: SmtpRelay['logins'] = []
  const refuse = new Set<string>()
  const deferOnce = new Set<string>()
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push({ user: auth.username ?? '', password: auth.password ?? '' })
      if (auth.username === account.user && auth.password === account.password)
        return callback(null, { user: auth.username })
      return callback(new Error('Invalid username or password'))
    },
    onRcptTo(address, _session, callback) {
      const to = address.address.toLowerCase()
      const refusal = (code: number, text: string) =>
        Object.assign(new Error(text), { responseCode: code })
      if (refuse.has(to)) return callback(refusal(550, 'No such mailbox'))
      if (deferOnce.delete(to)) return callback(refusal(451, 'Greylisted, try again later'))
      callback()
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', async () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
          mail: await simpleParser(raw),
          raw,
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  const relay: SmtpRelay = {
    port,
    received,
    logins,
    refuse,
    deferOnce,
    to: (address) => received.filter((item) => item.to.includes(address.toLowerCase())),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
  return { relay, account }
}

/** Points e-mail out at the relay for a test group; answers the restore function. */
export function useRelay(relay: SmtpRelay, account: { user: string; password: string }) {
  const saved = { ...gatewaysConfig.smtp }
  Object.assign(gatewaysConfig.smtp, {
    host: '127.0.0.1',
    port: relay.port,
    secure: false,
    user: account.user,
    password: account.password,
    from: 'Quire <quire@quire.test>',
    timeoutMs: 10_000,
  })
  return () => Object.assign(gatewaysConfig.smtp, saved)
}

/** The env variables that point a child Quire process at the relay. */
export function relayEnv(relay: SmtpRelay, account: { user: string; password: string }) {
  return {
    GATEWAYS_SMTP_HOST: '127.0.0.1',
    GATEWAYS_SMTP_PORT: String(relay.port),
    GATEWAYS_SMTP_USER: account.user,
    GATEWAYS_SMTP_PASSWORD: account.password,
    GATEWAYS_MAIL_FROM: 'Quire <quire@quire.test>',
  }
}
