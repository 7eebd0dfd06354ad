import { randomUUID } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import MailComposer from 'nodemailer/lib/mail-composer/index.js'
import type Mail from 'nodemailer/lib/mailer/index.js'
import sharp from 'sharp'
import { MediaStore } from '#plugins/media/services/media_store'
import gatewaysConfig from '#plugins/gateways/config'
import { bookAddress } from '#plugins/gateways/services/mail_in/mail_address'

export const MAIL_DOMAIN = 'books.quire.test'

/** The test domain and settings for a group; restored after it. */
export function withMailSettings(settings: Partial<typeof gatewaysConfig.mailIn> = {}) {
  const saved = { ...gatewaysConfig.mailIn }
  Object.assign(gatewaysConfig.mailIn, { domain: MAIL_DOMAIN, ...settings })
  return () => {
    Object.assign(gatewaysConfig.mailIn, saved)
  }
}

export const addressOf = (book: { b_o: string; b_c: string }) => {
  const address = bookAddress(book)
  if (!address) throw new Error(`no address for ${book.b_o}/${book.b_c}`)
  return address
}

/** A small real PNG (sharp), 8x8 of one colour. */
export function png(colour = '#3366cc') {
  return sharp({ create: { width: 8, height: 8, channels: 3, background: colour } })
    .png()
    .toBuffer()
}

/** A minimal PDF document. */
export const pdf = () =>
  Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n')

/** A raw RFC 5322 message as nodemailer writes it (the MIME a real mailer sends). */
export async function rawMail(options: Mail.Options): Promise<Buffer> {
  return new MailComposer({ messageId: `<${randomUUID()}@sender.test>`, ...options })
    .compile()
    .build()
}

/** Counts of what a mail may write: messages, media rows, stored files, log rows. */
export async function footprint() {
  const count = async (table: string) => {
    const [row] = await db.from(table).count('* as n')
    return Number(row.n)
  }
  const store = await app.container.make(MediaStore)
  const root = store.localPath('files')
  return {
    messages: await count('book_messages'),
    media: await count('media_files'),
    files: root ? await filesUnder(root) : 0,
    log: await count('gateways_mail_in_log'),
  }
}

async function filesUnder(directory: string): Promise<number> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => [])
  let total = 0
  for (const entry of entries) {
    total += entry.isDirectory() ? await filesUnder(join(directory, entry.name)) : 1
  }
  return total
}

/** The last log row (the mail just handled). */
export async function lastLog() {
  return db.from('gateways_mail_in_log').orderBy('id', 'desc').first()
}

export async function messageRow(smid: number) {
  return db.from('book_messages').where('smid', smid).first()
}
