import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { parseList } from '#core/json_column'
import type { MediaEntry } from '../models/records.js'
import { BookService } from './book_service.js'
import { MessageWriter } from './message_writer.js'

/**
 * Attaching a stored file to a message: what the books plugin lets the media
 * plugin do to a message's `medias` list. The media plugin knows files, not
 * messages; it calls these methods and never reads or writes a message itself.
 */
@inject()
export class MessageAttachmentsService {
  constructor(
    private messages: MessageWriter,
    private books: BookService
  ) {}

  /**
   * The message a file is about to be attached to (smid, or its uuid with
   * b_o/b_c), checked before the file is stored: it exists, is not deleted,
   * and the actor may change it. `uuidNamesMessage`: the uuid sent named the
   * message rather than the file.
   */
  async target(actor: Actor, input: { smid?: number; uuid?: string; b_o?: string; b_c?: string }) {
    const located = await this.messages.locate(actor, input)
    await this.messages.assertCanChange(actor, located.book, located.row)
    if (located.row.del) throw rpcError('NOT_FOUND', 'Message not found')
    return {
      smid: Number(located.row.smid),
      book: located.book,
      uuidNamesMessage: !input.smid || input.uuid === located.row.uuid,
    }
  }

  /**
   * Appends a file to the message's medias (a read-modify-write: the caller
   * runs one attach per message at a time, the media plugin's SharedLock) and
   * raises nbMedias/nbDocs; an image becomes the book's lastMedia. Answers the
   * new sstamp and how many live files of the entry's type the message holds.
   */
  async attach(actor: Actor, smid: number, entry: MediaEntry, options: { image: boolean }) {
    const { row, book } = await this.messages.locate(actor, { smid })
    // Deleted while the file was on its way: its files are being retired (media's lifecycle).
    if (row.del) throw rpcError('NOT_FOUND', 'Message not found')
    const medias = parseList(row.medias)
    medias.push(entry)
    const live = medias.filter((media) => !media.del)
    const sameType = live.filter((media) => media.type === entry.type)
    const nbMedias = live.filter((media) => media.type !== 'doc').length
    const nbDocs = live.length - nbMedias
    const result = await this.messages.setAttachments(smid, {
      medias,
      nbMedias: Math.max(Number(row.nb_medias ?? 0), nbMedias),
      nbDocs: Math.max(Number(row.nb_docs ?? 0), nbDocs),
    })
    if (options.image) await this.books.setLastMedia(book.id, entry.id)
    return { sstamp: result.sstamp, sameType: sameType.length }
  }
}
