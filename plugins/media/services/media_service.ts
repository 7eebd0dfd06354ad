import { randomBytes, randomUUID } from 'node:crypto'
import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import type { UploadedFile } from '#core/rpc/params'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import { BookService } from '#plugins/books/services/book_service'
import { MessageWriter } from '#plugins/books/services/message_writer'
import { RowsService } from '#plugins/tables/services/rows_service'
import { TableAccess } from '#plugins/tables/services/table_access'
import { ValuesService } from '#plugins/tables/services/values_service'
import mediaConfig from '../config.js'
import { identify, isDecodableImage, sniffFile, type MediaKind } from '../lib/sniff.js'
import { SharedLock } from '../lib/shared_lock.js'
import { enforceMediaRestrictions } from '../lib/areas.js'
import { clientUuid } from '../lib/client_uuid.js'
import { serializeUpload, wireType } from '../serializers/upload_answer.js'
import { CorruptImageError, DerivativeService, ImageTooLargeError } from './derivative_service.js'
import { MediaStore } from './media_store.js'

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

/** Where an upload goes: a message (smid, or the message uuid with its book) or a file cell. */
export interface UploadTarget {
  smid?: number
  uuid?: string
  rowId?: string
  fieldId?: number
  b_o?: string
  b_c?: string
  bypassUrlTrigger?: boolean
}

const duplicateUuid = () =>
  rpcError('INVALID_PARAMETER', 'Invalid parameter uuid: it already names another file', {
    field: 'uuid',
  })

/**
 * Uploads and stored files: storage under server-made names, content
 * sniffing and limits, attachment to messages (through the books plugin's
 * MessageWriter) and file cells (through the tables plugin's RowsService),
 * profile images and book covers, and the lookups of the /dbi URLs.
 */
@inject()
export class MediaService {
  /** One attach at a time per message or cell, across instances (see SharedLock). */
  private locks = new SharedLock(`quire-media:${env.get('DB_DATABASE', 'quire')}`)
  /** uuid/internName -> row: a cached /dbi/in request reads no database. */
  private byNameCache = new Map<string, { row: MediaFile; at: number }>()
  /** Lookups by name under way (see byName). */
  private byNameLookups = new Map<string, Promise<MediaFile | null>>()

  constructor(
    private store: MediaStore,
    private derivatives: DerivativeService,
    private bookAccess: BookAccessService,
    private books: BookService,
    private messages: MessageWriter,
    private tableAccess: TableAccess,
    private rows: RowsService,
    private values: ValuesService,
    private stamps: StampService
  ) {}

  // ---- storing --------------------------------------------------------------

  /**
   * Checks an uploaded file (size, content type from its bytes, pixel count
   * of images from the header) and moves it into storage under a server-made
   * name. Nothing is recorded yet: the caller records it or discards it.
   */
  async storeUpload(
    upload: { tmpPath: string; clientName: string; size: number },
    uuid: string = randomUUID()
  ) {
    if (upload.size > mediaConfig.maxUploadBytes)
      throw rpcError(
        'PAYLOAD_TOO_LARGE',
        `The file exceeds ${mediaConfig.maxUploadBytes} bytes (MEDIA_MAX_UPLOAD_BYTES)`
      )
    if (upload.size === 0)
      throw rpcError('INVALID_PARAMETER', 'The file is empty', { field: 'qqfile' })
    const originName = String(upload.clientName ?? '')
      .replace(/^.*[\\/]/, '')
      .slice(0, 255)
    const found = identify(await sniffFile(upload.tmpPath), originName)
    let width: number | null = null
    let height: number | null = null
    if (found.kind === 'image' && isDecodableImage(found.ext)) {
      try {
        ;({ width, height } = await this.derivatives.probe(upload.tmpPath))
      } catch (error) {
        if (error instanceof ImageTooLargeError)
          throw rpcError('PAYLOAD_TOO_LARGE', `${error.message} (MEDIA_MAX_PIXELS)`)
        if (error instanceof CorruptImageError)
          throw rpcError('INVALID_PARAMETER', `Corrupt image: ${error.message}`, {
            field: 'qqfile',
          })
        throw error
      }
    }
    const internName = `${randomBytes(16).toString('hex')}.${found.ext}`
    const key = `files/${internName.slice(0, 2)}/${internName}`
    await this.store.putFile(key, upload.tmpPath)
    return {
      uuid,
      internName,
      key,
      originName: originName || `file.${found.ext}`,
      ext: found.ext,
      mime: found.mime,
      kind: found.kind,
      size: upload.size,
      width,
      height,
    } satisfies StoredUpload
  }

  async record(
    stored: StoredUpload,
    owner: number,
    where: Pick<MediaFile, 'purpose'> &
      Partial<Pick<MediaFile, 'book_id' | 'smid' | 'row_id' | 'field_id'>>
  ): Promise<number> {
    const [inserted] = await this.insertRow(stored, owner, where)
    return Number(typeof inserted === 'object' ? inserted.id : inserted)
  }

  private async insertRow(
    stored: StoredUpload,
    owner: number,
    where: Pick<MediaFile, 'purpose'> &
      Partial<Pick<MediaFile, 'book_id' | 'smid' | 'row_id' | 'field_id'>>
  ) {
    try {
      return await this.insertQuery(stored, owner, where)
    } catch (error) {
      // Two uploads naming one client uuid at once: the unique index keeps the first.
      if (await this.uuidTaken(stored.uuid)) throw duplicateUuid()
      throw error
    }
  }

  private insertQuery(
    stored: StoredUpload,
    owner: number,
    where: Pick<MediaFile, 'purpose'> &
      Partial<Pick<MediaFile, 'book_id' | 'smid' | 'row_id' | 'field_id'>>
  ) {
    return db
      .table('media_files')
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
  }

  /** Whether a file (live or deleted) already has this uuid. */
  private async uuidTaken(uuid: string) {
    return Boolean(await db.from('media_files').where('uuid', uuid).select('id').first())
  }

  /** Undoes a store (and its record): a failed attach leaves no orphan file and no row. */
  async discard(stored: StoredUpload, id?: number) {
    if (id !== undefined) await db.from('media_files').where('id', id).delete()
    await this.store.delete(stored.key).catch(() => {})
  }

  async storeFirst(file: UploadedFile | undefined, uuid?: string) {
    if (!file) throw rpcError('MISSING_PARAMETER', 'Missing file part: qqfile', { field: 'qqfile' })
    return this.storeUpload(file, uuid)
  }

  // ---- fileUpload ------------------------------------------------------------

  /**
   * fileUpload (and a finished resumableUpload): the file attached to a
   * message (smid, or the message's uuid with b_o/b_c) or to a file cell
   * (rowId + fieldId; the book is worked out from them). The target is
   * checked before anything is stored.
   */
  async upload(actor: Actor, target: UploadTarget, file: UploadedFile | undefined) {
    const resolved = await this.resolveTarget(actor, target)
    const stored = await this.storeFirst(file, resolved.fileUuid)
    return resolved.kind === 'message'
      ? this.attachToMessage(actor, resolved, stored)
      : this.attachToCell(actor, resolved, stored)
  }

  /** Checks a target as upload() would, storing nothing (resumable upload creation). */
  async checkTarget(actor: Actor, target: UploadTarget) {
    await this.resolveTarget(actor, target)
  }

  private async resolveTarget(actor: Actor, target: UploadTarget) {
    const cell = target.fieldId !== undefined || (target.rowId ?? '') !== ''
    // The target's area, known before any lookup: a session hiding it learns nothing of it.
    enforceMediaRestrictions(
      actor,
      { label: 'This upload', writes: true, area: cell ? 'tables' : 'messages' },
      target
    )
    const resolved = cell
      ? await this.cellTarget(actor, target)
      : await this.messageTarget(actor, target)
    // The client's uuid names the file, unless it named the message (no smid: 2.14g).
    const named = resolved.kind === 'message' && resolved.uuidNamesMessage
    const fileUuid = named ? undefined : clientUuid(target.uuid)
    if (fileUuid && (await this.uuidTaken(fileUuid))) throw duplicateUuid()
    return { ...resolved, fileUuid }
  }

  private async messageTarget(actor: Actor, target: UploadTarget) {
    if (!target.smid && !target.uuid)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: smid (or rowId and fieldId)', {
        field: 'smid',
      })
    const located = await this.messages.locate(actor, target)
    await this.messages.assertCanChange(actor, located.book, located.row)
    if (located.row.del) throw rpcError('NOT_FOUND', 'Message not found')
    return {
      kind: 'message' as const,
      smid: Number(located.row.smid),
      book: located.book,
      // Found by its uuid, or a client sending the message's uuid with its smid.
      uuidNamesMessage: !target.smid || target.uuid === located.row.uuid,
    }
  }

  private async attachToMessage(
    actor: Actor,
    target: Awaited<ReturnType<MediaService['messageTarget']>>,
    stored: StoredUpload
  ) {
    const { smid, book } = target
    return this.locks.run(`msg:${smid}`, async () => {
      let id: number | undefined
      try {
        id = await this.record(stored, actor.user.id, {
          purpose: 'message',
          book_id: book.id,
          smid,
        })
        const { row } = await this.messages.locate(actor, { smid })
        // Deleted while the file was on its way: its files are being retired (MediaLifecycle).
        if (row.del) throw rpcError('NOT_FOUND', 'Message not found')
        const medias = parseList(row.medias)
        const entry = {
          id,
          ext: stored.ext,
          originName: stored.originName,
          internName: stored.internName,
          uuid: stored.uuid,
          size: stored.size,
          type: wireType(stored.kind) as 'media' | 'doc',
          emailCid: '',
          del: false,
        }
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
        if (stored.kind === 'image') await this.books.setLastMedia(book.id, id)
        return serializeUpload(stored, id, {
          smid,
          mdc: sameType.length,
          book,
          sstamp: result.sstamp,
        })
      } catch (error) {
        await this.discard(stored, id)
        throw error
      }
    })
  }

  private async cellTarget(actor: Actor, target: UploadTarget) {
    const rowKey = String(target.rowId ?? '').trim()
    if (target.fieldId === undefined)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: fieldId', { field: 'fieldId' })
    if (rowKey === '')
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: rowId', { field: 'rowId' })
    const isTmp = rowKey.startsWith('tmp')
    if (!isTmp && !/^\d+$/.test(rowKey))
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter rowId: not a row id', {
        field: 'rowId',
      })
    const catId = await this.tableAccess.inferCategory({ fieldId: target.fieldId })
    const scope = await this.tableAccess.forCategory(actor, catId, 'write', target.b_o)
    if (target.b_c && target.b_c !== scope.book.b_c) throw rpcError('NOT_FOUND', 'Table not found')
    const field = scope.category.fields.find((candidate) => candidate.id === target.fieldId)
    if (!field || field.type !== 'files')
      throw rpcError('INVALID_PARAMETER', `Field ${target.fieldId} is not a files field`, {
        field: 'fieldId',
      })
    const readCell = async () => {
      if (isTmp) return []
      const { tableValues } = await this.values.subset(actor, {
        catId,
        b_o: scope.book.b_o,
        fieldIds: [field.id],
        rowIds: [Number(rowKey)],
      })
      if (tableValues.length === 0) throw rpcError('NOT_FOUND', `Row ${rowKey} not found`)
      return parseList(tableValues[0][0])
    }
    await readCell()
    return {
      kind: 'cell' as const,
      rowKey,
      isTmp,
      field,
      book: scope.book,
      readCell,
      bypassUrlTrigger: target.bypassUrlTrigger,
    }
  }

  private async attachToCell(
    actor: Actor,
    target: Awaited<ReturnType<MediaService['cellTarget']>>,
    stored: StoredUpload
  ) {
    const { rowKey, isTmp, field, book, readCell } = target
    return this.locks.run(`cell:${rowKey}:${field.id}`, async () => {
      let id: number | undefined
      try {
        // The row and field are set once the cell lists the file: until then no cell write's
        // reconciliation (MediaLifecycle) can take it for a file removed from the cell.
        id = await this.record(stored, actor.user.id, { purpose: 'cell', book_id: book.id })
        const list = await readCell()
        const entry = {
          id,
          uuid: stored.uuid,
          name: stored.originName,
          originName: stored.originName,
          internName: stored.internName,
          ext: stored.ext,
          size: stored.size,
          type: wireType(stored.kind),
          mime: stored.mime,
        }
        list.push(entry)
        const written = await this.rows.updateValue(actor, {
          rowId: rowKey,
          fieldId: field.id,
          value: list,
          b_o: book.b_o,
          bypassUrlTrigger: target.bypassUrlTrigger ?? true,
          source: 'api',
        })
        const rowId = isTmp ? Number(written.newRows[0]?.id ?? 0) : Number(rowKey)
        await db
          .from('media_files')
          .where('id', id)
          .update({ row_id: rowId || null, field_id: field.id })
        const sameType = list.filter((item) => item.type === entry.type)
        return serializeUpload(stored, id, {
          rowId,
          fieldId: field.id,
          mdc: sameType.length,
          book,
          sstamp: await this.stamps.watermark(),
        })
      } catch (error) {
        await this.discard(stored, id)
        throw error
      }
    })
  }

  // ---- lookups for the /dbi URLs ---------------------------------------------

  /** Drops names from the lookup cache (files just marked deleted). */
  forget(names: string[]) {
    for (const name of names) {
      this.byNameCache.delete(name)
      this.byNameLookups.delete(name)
    }
  }

  /**
   * A live file by uuid or internal name, cached a few seconds (covers and
   * thumbnails are fetched often). Concurrent lookups of one name share one
   * query: when an entry expires under load, the requests arriving together
   * do not each ask the database.
   */
  async byName(name: string): Promise<MediaFile | null> {
    if (!/^[\w.-]{8,80}$/.test(name)) return null
    const cached = this.byNameCache.get(name)
    if (cached && Date.now() - cached.at < mediaConfig.nameCacheMs) return cached.row
    let lookup = this.byNameLookups.get(name)
    if (!lookup) {
      const column = /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(name) ? 'uuid' : 'intern_name'
      const started: Promise<MediaFile | null> = db
        .from('media_files')
        .where(column, name)
        .where('del', false)
        .first()
        .then((row: MediaFile | null) => {
          // Cached only when not forgotten meanwhile (a deletion during the query).
          if (row && this.byNameLookups.get(name) === started) {
            if (this.byNameCache.size > 10_000) this.byNameCache.clear()
            this.byNameCache.set(name, { row, at: Date.now() })
          }
          return row ?? null
        })
        .finally(() => {
          if (this.byNameLookups.get(name) === started) this.byNameLookups.delete(name)
        })
      lookup = started
      this.byNameLookups.set(name, lookup)
    }
    return lookup
  }

  async byId(bookId: number, id: number): Promise<MediaFile | null> {
    return (
      ((await db
        .from('media_files')
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
      .from('media_files')
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
        .from('media_files')
        .where('book_id', bookId)
        .where('kind', 'image')
        .where('del', false)
        .whereIn('purpose', ['message', 'cell'])
        .orderBy('id', 'desc')
        .first()) as MediaFile | null) ?? null
    )
  }

  /** Whether the actor may see a file found by name through a session-bound form (oin). */
  async visibleTo(actor: Actor, file: MediaFile) {
    if (file.owner_id === actor.user.id) return true
    if (file.book_id === null) return false
    const book = await this.bookAccess.findById(file.book_id)
    if (!book || !this.bookAccess.allows(actor, book)) return false
    return (await this.bookAccess.rightOf(actor.user.id, book.id)) !== null
  }
}

/** A JSON list held as text or as an array (medias, a file cell's value); anything else is empty. */
export function parseList(value: unknown): any[] {
  if (Array.isArray(value)) return [...value]
  if (typeof value !== 'string' || value.trim() === '') return []
  try {
    const parsed = JSON.parse(value)
    return Array.isArray(parsed) ? parsed : []
  } catch {
    return []
  }
}
