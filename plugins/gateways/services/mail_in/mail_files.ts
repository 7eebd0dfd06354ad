import { randomUUID } from 'node:crypto'
import { rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inject } from '@adonisjs/core'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { Attachment } from 'mailparser'
import { RpcError } from '#core/rpc/errors'
import type { MediaEntry } from '#plugins/books/models/records'
import { MediaService, type StoredUpload } from '#plugins/media/services/media_service'
import { wireType } from '#plugins/media/serializers/upload_answer'
import { MailRefusal } from './mail_refusal.js'

/** A mail's file in storage, not yet recorded; `cid` when the HTML shows it inline. */
export interface MailFile {
  stored: StoredUpload
  cid: string | null
}

/**
 * A mail's attachments and inline images as the media plugin stores files:
 * its checks (size, type from the bytes, images probed by sharp), its
 * storage names; recorded in the message's transaction; removed from
 * storage when the message is not stored.
 */
@inject()
export class MailFiles {
  constructor(private media: MediaService) {}

  /**
   * Stores the attachments (none empty). An image whose Content-ID the HTML
   * references (`cid:`) is an inline image (its emailCid). One the media
   * checks refuse refuses the mail, and those stored before it are removed.
   */
  async store(attachments: Attachment[], html: string): Promise<MailFile[]> {
    const files: MailFile[] = []
    try {
      for (const attachment of attachments) {
        const stored = await this.storeOne(attachment)
        const cid = attachment.cid?.trim() ?? ''
        const inline = cid !== '' && stored.kind === 'image' && html.includes(`cid:${cid}`)
        files.push({ stored, cid: inline ? cid : null })
      }
      return files
    } catch (error) {
      await this.discard(files)
      throw error
    }
  }

  private async storeOne(attachment: Attachment): Promise<StoredUpload> {
    const tmpPath = join(tmpdir(), `quire-mail-${randomUUID()}`)
    await writeFile(tmpPath, attachment.content)
    try {
      return await this.media.storeUpload({
        tmpPath,
        clientName: attachment.filename ?? '',
        size: attachment.content.length,
      })
    } catch (error) {
      if (!(error instanceof RpcError)) throw error
      const name = attachment.filename ?? attachment.cid ?? 'an attachment'
      throw new MailRefusal('MAIL_ATTACHMENT_REFUSED', `${name}: ${error.message}`)
    } finally {
      // Moved into storage on success; left here on a refusal.
      await rm(tmpPath, { force: true })
    }
  }

  /**
   * Records the files as the message's (in its transaction `client`) and
   * answers the message's medias column and counts (inline images count
   * among nbMedias and in nbEmailCids), and the id of the last image.
   */
  async record(
    files: MailFile[],
    owner: number,
    message: { bookId: number; smid: number },
    client: QueryClientContract
  ) {
    const medias: MediaEntry[] = []
    for (const { stored, cid } of files) {
      const id = await this.media.record(
        stored,
        owner,
        { purpose: 'message', book_id: message.bookId, smid: message.smid },
        client
      )
      medias.push({
        id,
        ext: stored.ext,
        originName: stored.originName,
        internName: stored.internName,
        uuid: stored.uuid,
        size: stored.size,
        type: wireType(stored.kind) as MediaEntry['type'],
        emailCid: cid ?? '',
        del: false,
      })
    }
    const nbDocs = medias.filter((media) => media.type === 'doc').length
    const images = medias.filter((_media, index) => files[index].stored.kind === 'image')
    return {
      columns: {
        medias: medias.length > 0 ? JSON.stringify(medias) : null,
        nb_medias: medias.length - nbDocs,
        nb_docs: nbDocs,
        nb_email_cids: medias.filter((media) => media.emailCid !== '').length,
      },
      lastImage: images.at(-1)?.id ?? null,
    }
  }

  /** Removes stored files of a mail that was not stored (their rows, if any, were rolled back). */
  async discard(files: MailFile[]) {
    for (const file of files) await this.media.discard(file.stored)
  }
}
