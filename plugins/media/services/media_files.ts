import { randomBytes } from 'node:crypto'
import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { rpcError } from '#core/rpc/errors'
import type { MediaKind } from '../lib/sniff.js'

/** A row of media_files. */
export interface MediaFile {
  id: number
  uuid: string
  intern_name: string
  storage_key: string
  origin_name: string
  ext: string
  mime: string
  kind: MediaKind
  size: number
  width: number | null
  height: number | null
  purpose: 'message' | 'cell' | 'profile' | 'cover'
  owner_id: number
  book_id: number | null
  smid: number | null
  row_id: number | null
  field_id: number | null
  del: boolean | number
  created: number
}

/** A file moved into storage, not yet recorded. */
export interface StoredUpload {
  uuid: string
  internName: string
  key: string
  originName: string
  ext: string
  mime: string
  kind: MediaKind
  size: number
  width: number | null
  height: number | null
}

/**
 * A new server-made name for a stored file (random, with the file's
 * extension) and its storage key, `files/<ab>/<internName>`.
 */
export function newStorageName(ext: string): Pick<StoredUpload, 'internName' | 'key'> {
  const internName = `${randomBytes(16).toString('hex')}.${ext}`
  return { internName, key: `files/${internName.slice(0, 2)}/${internName}` }
}

/** What holds a recorded file. */
export type FilePlace = Pick<MediaFile, 'purpose'> &
  Partial<Pick<MediaFile, 'book_id' | 'smid' | 'row_id' | 'field_id'>>

/** Files by what held them: a message's, a book's, the cells of fields or of rows, or by id. */
export type FileSelection =
  | { message: { bookId: number; smid: number } }
  | { bookId: number }
  | { cellFieldIds: number[] }
  | { cellRowIds: number[] }
  | { ids: number[] }

export const duplicateUuid = () =>
  rpcError('INVALID_PARAMETER', 'Invalid parameter uuid: it already names another file', {
    field: 'uuid',
  })

const TABLE = 'media_files'

/**
 * The media_files table: every query the media plugin makes of it lives
 * here (the services ask for rows by meaning, never build queries). Rows are
 * plain objects (MediaFile), as knex answers them.
 */
@inject()
export class MediaFiles {
  /**
   * Records a stored file; a client uuid another file already has answers
   * INVALID_PARAMETER. `client`: a transaction the row belongs to (a message
   * written with its files at once).
   */
  async record(
    stored: StoredUpload,
    owner: number,
    where: FilePlace,
    client: QueryClientContract = db.connection()
  ): Promise<number> {
    let inserted: any
    try {
      ;[inserted] = await client
        .table(TABLE)
        .insert({
          uuid: stored.uuid,
          intern_name: stored.internName,
          storage_key: stored.key,
          origin_name: stored.originName,
          ext: stored.ext,
          mime: stored.mime,
          kind: stored.kind,
          size: stored.size,
          width: stored.width,
          height: stored.height,
          owner_id: owner,
          del: false,
          created: Math.floor(Date.now() / 1000),
          book_id: where.book_id ?? null,
          smid: where.smid ?? null,
          row_id: where.row_id ?? null,
          field_id: where.field_id ?? null,
          purpose: where.purpose,
        })
        .returning('id')
    } catch (error) {
      // Two uploads naming one client uuid at once: the unique index keeps the first.
      if (await this.uuidTaken(stored.uuid)) throw duplicateUuid()
      throw error
    }
    return Number(typeof inserted === 'object' ? inserted.id : inserted)
  }

  /** Whether a file (live or deleted) already has this uuid. */
  async uuidTaken(uuid: string) {
    return Boolean(await db.from(TABLE).where('uuid', uuid).select('id').first())
  }

  /** Removes a row outright (an attach that failed: the file never existed). */
  async remove(id: number) {
    await db.from(TABLE).where('id', id).delete()
  }

  /** A cell file's row and field, set once the cell lists it (see MediaLifecycle.reconcileCells). */
  async placeInCell(id: number, rowId: number | null, fieldId: number) {
    await db.from(TABLE).where('id', id).update({ row_id: rowId, field_id: fieldId })
  }

  /** A live file by uuid (a name shaped like one) or internal name. */
  async liveByName(name: string): Promise<MediaFile | null> {
    const column = /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(name) ? 'uuid' : 'intern_name'
    return ((await db.from(TABLE).where(column, name).where('del', false).first()) ??
      null) as MediaFile | null
  }

  async byId(bookId: number, id: number): Promise<MediaFile | null> {
    return (
      ((await db
        .from(TABLE)
        .where('id', id)
        .where('book_id', bookId)
        .where('del', false)
        .first()) as MediaFile | null) ?? null
    )
  }

  /** The mdc-th (from 1) image/media or document of a message. */
  async byCount(bookId: number, smid: number, type: 'media' | 'doc', mdc: number) {
    if (mdc < 1) return null
    const query = db
      .from(TABLE)
      .where('smid', smid)
      .where('book_id', bookId)
      .where('del', false)
      .orderBy('id', 'asc')
      .offset(mdc - 1)
      .limit(1)
    if (type === 'doc') query.where('kind', 'doc')
    else query.whereNot('kind', 'doc')
    const [row] = await query
    return (row as MediaFile) ?? null
  }

  /** The book's last image (cover "last image"). */
  async lastImage(bookId: number): Promise<MediaFile | null> {
    return (
      ((await db
        .from(TABLE)
        .where('book_id', bookId)
        .where('kind', 'image')
        .where('del', false)
        .whereIn('purpose', ['message', 'cell'])
        .orderBy('id', 'desc')
        .first()) as MediaFile | null) ?? null
    )
  }

  /** The user's current profile image. */
  async profileOf(userId: number): Promise<MediaFile | null> {
    return (await db
      .from(TABLE)
      .where('owner_id', userId)
      .where('purpose', 'profile')
      .where('del', false)
      .orderBy('id', 'desc')
      .first()) as MediaFile | null
  }

  /** Marks the user's profile images other than `keptId` deleted. */
  async retireOtherProfiles(userId: number, keptId: number) {
    await db
      .from(TABLE)
      .where('owner_id', userId)
      .where('purpose', 'profile')
      .whereNot('id', keptId)
      .update({ del: true })
  }

  /** Live cell files of these rows and fields. */
  async liveInCells(rowIds: number[], fieldIds: number[]) {
    return (await db
      .from(TABLE)
      .where('purpose', 'cell')
      .where('del', false)
      .whereIn('row_id', rowIds)
      .whereIn('field_id', fieldIds)
      .select('id', 'uuid', 'row_id', 'field_id')) as Pick<
      MediaFile,
      'id' | 'uuid' | 'row_id' | 'field_id'
    >[]
  }

  /** A message's live attachments, oldest first. */
  async liveOfMessage(bookId: number, smid: number) {
    return (await db
      .from(TABLE)
      .where('smid', smid)
      .where('book_id', bookId)
      .where('purpose', 'message')
      .where('del', false)
      .orderBy('id', 'asc')) as MediaFile[]
  }

  /** The live files a selection names, as retiring needs them. */
  async liveIn(selection: FileSelection) {
    const query = db.from(TABLE).where('del', false)
    if ('message' in selection)
      query
        .where('smid', selection.message.smid)
        .where('book_id', selection.message.bookId)
        .where('purpose', 'message')
    else if ('bookId' in selection) query.where('book_id', selection.bookId)
    else if ('cellFieldIds' in selection)
      query.where('purpose', 'cell').whereIn('field_id', selection.cellFieldIds)
    else if ('cellRowIds' in selection)
      query.where('purpose', 'cell').whereIn('row_id', selection.cellRowIds)
    else query.whereIn('id', selection.ids)
    return (await query.select('id', 'uuid', 'intern_name', 'kind', 'book_id')) as Pick<
      MediaFile,
      'id' | 'uuid' | 'intern_name' | 'kind' | 'book_id'
    >[]
  }

  async markDeleted(ids: number[]) {
    await db.from(TABLE).whereIn('id', ids).update({ del: true })
  }

  /** Of these files, those marked deleted (what the purge job may remove). */
  async deletedAmong(ids: number[]) {
    return (await db
      .from(TABLE)
      .whereIn('id', ids)
      .where('del', true)
      .select('id', 'storage_key', 'intern_name', 'ext')) as Pick<
      MediaFile,
      'id' | 'storage_key' | 'intern_name' | 'ext'
    >[]
  }
}
