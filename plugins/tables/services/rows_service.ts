import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { isTmp } from '../lib/row_sql.js'
import { asObject } from '../lib/wire.js'
import { CellWriter, type CellInput } from './cell_writer.js'
import { FieldEncryption, isEncrypted, type UnlockedFields } from './field_encryption.js'
import { MetaService } from './meta_service.js'
import { RowDeletes, type DeleteOptions } from './row_deletes.js'
import { RowWriter, type RowWrite, type WriteOptions, type WriteResult } from './row_writer.js'
import { TableAccess } from './table_access.js'

export type { RowWrite, WriteOptions, WriteResult } from './row_writer.js'
export type { CellInput } from './cell_writer.js'

/** What updateTableValue answers from (neither the operation nor the socket sends row state). */
export type UpdateValueResult = Pick<
  WriteResult,
  'categoryId' | 'newRows' | 'created' | 'modified' | 'formLastModified'
>

const given = (value: unknown) => value !== undefined && value !== null && value !== ''

/** Options every row write operation passes on. */
interface RowsInput {
  b_o?: string
  catId?: number
  linkSeparator?: string
  bypassUrlTrigger?: boolean
  /** {fieldId: password} (JSON): the encrypted fields this write may write (FieldEncryption). */
  encryptedFieldPasswords?: unknown
}

/**
 * Row writes and deletes as the operations and the socket (type 13) ask for
 * them. The work is done by CellWriter (one cell, group-committed),
 * RowWriter (rows), RowDeletes and, after commit, RecomputeService.
 */
@inject()
export class RowsService {
  constructor(
    private access: TableAccess,
    private cells: CellWriter,
    private writer: RowWriter,
    private deletes: RowDeletes,
    private meta: MetaService,
    private encryption: FieldEncryption
  ) {}

  /**
   * The encrypted fields a write unlocks (encryptedFieldPasswords), read only once the caller's
   * right to write the table is checked: a stranger learns nothing of a password. Absent: none.
   */
  private async unlock(
    actor: Actor,
    categoryId: number | undefined,
    b_o: unknown,
    passwords: unknown
  ): Promise<UnlockedFields | undefined> {
    // Given passwords, categoryOf names the table.
    if (!given(passwords) || !categoryId) return undefined
    const { category } = await this.access.forCategory(actor, categoryId, 'write', b_o)
    return this.encryption.unlock(category, passwords, actor.user.id)
  }

  /**
   * The table of a row write that unlocks fields: catId, else its first field named, else its
   * first server row id (as RowWriter infers it). Without passwords RowWriter infers it.
   */
  private async categoryOf(input: RowsInput, writes: RowWrite[]) {
    if (input.catId || !given(input.encryptedFieldPasswords)) return input.catId || undefined
    const first = writes.find((write) => Object.keys(write.values).length || !isTmp(write.key))
    const fieldId = first ? Object.keys(first.values)[0] : undefined
    return this.access.inferCategory(fieldId ? { fieldId } : { rowId: first?.key })
  }

  /** updateTableValue and the socket's update table value: one cell; a `tmp` rowId creates a row. */
  async updateValue(
    actor: Actor,
    input: CellInput & { encryptedFieldPasswords?: unknown }
  ): Promise<UpdateValueResult> {
    const categoryId = await this.access.inferCategory({ fieldId: input.fieldId })
    const { encryptedFieldPasswords, ...cell } = input
    input = { ...cell, operation: input.operation ?? 'updateTableValue' }
    const unlocked = await this.unlock(actor, categoryId, input.b_o, encryptedFieldPasswords)
    // An encrypted cell is sealed by RowWriter (FieldEncryption.sealWrite), never by CellWriter.
    // The cached metadata is CellWriter's own (no query); stale, CellWriter declines anyway.
    const found = this.meta.cached(categoryId)
    const field = found?.category.fields.find((candidate) => candidate.id === input.fieldId)
    if (!(field && isEncrypted(field)) && (await this.cells.write(actor, categoryId, input)))
      return {
        categoryId,
        newRows: [],
        created: 0,
        modified: 1,
        formLastModified: Math.floor(Date.now() / 1000),
      }
    return this.writer.write(
      actor,
      [{ key: input.rowId, values: { [String(input.fieldId)]: input.value } }],
      {
        categoryId,
        b_o: input.b_o,
        bypassUrlTrigger: input.bypassUrlTrigger,
        source: input.source,
        operation: input.operation,
        unlocked,
      }
    )
  }

  /** Writes rows given as {key, values} (the general path). */
  write(actor: Actor, writes: RowWrite[], options: WriteOptions): Promise<WriteResult> {
    return this.writer.write(actor, writes, options)
  }

  /**
   * createOrUpdateTableRow: one row, `fieldValues` {fieldId: value}. Its answer's `rows` show
   * encrypted cells as reads do: plaintext when unlocked, else masked.
   */
  async writeRow(
    actor: Actor,
    input: RowsInput & { rowId: string; fieldValues?: Record<string, unknown> }
  ) {
    const writes = [{ key: input.rowId, values: input.fieldValues ?? {} }]
    const categoryId = await this.categoryOf(input, writes)
    const unlocked = await this.unlock(actor, categoryId, input.b_o, input.encryptedFieldPasswords)
    const result = await this.writer.write(actor, writes, {
      categoryId,
      b_o: input.b_o,
      linkSeparator: input.linkSeparator,
      bypassUrlTrigger: input.bypassUrlTrigger,
      operation: 'createOrUpdateTableRow',
      unlocked,
    })
    // The write has just loaded the metadata: no revalidation query for the answer.
    const found =
      this.meta.cached(result.categoryId) ?? (await this.meta.category(result.categoryId))
    const rows = result.rows
    if (found) this.encryption.revealCells(found.category, rows, unlocked)
    return { ...result, rows }
  }

  /** createOrUpdateTableRows: `rows` {rowId: {fieldId: value}}; each row's values in any object form. */
  async writeRows(actor: Actor, input: RowsInput & { rows: Record<string, unknown> }) {
    const writes = Object.entries(input.rows).map(([key, values]) => ({
      key,
      values: asObject(values, `rows[${key}]`),
    }))
    if (writes.length === 0) throw rpcError('MISSING_PARAMETER', 'Missing parameter: rows')
    const categoryId = await this.categoryOf(input, writes)
    return this.writer.write(actor, writes, {
      categoryId,
      b_o: input.b_o,
      linkSeparator: input.linkSeparator,
      bypassUrlTrigger: input.bypassUrlTrigger,
      operation: 'createOrUpdateTableRows',
      unlocked: await this.unlock(actor, categoryId, input.b_o, input.encryptedFieldPasswords),
    })
  }

  /** Deletes rows by server id (rows of several tables may be mixed). */
  deleteRows(actor: Actor, rowIds: number[], options: DeleteOptions = {}) {
    return this.deletes.delete(actor, rowIds, options)
  }

  /**
   * deleteTableRow: a `tmp` id never reached the server, so nothing is
   * deleted and the client marks it synced; a missing row is NOT_FOUND.
   */
  async deleteRow(
    actor: Actor,
    input: { rowId: string; b_o?: string; bypassUrlTrigger?: boolean }
  ) {
    const rowId = input.rowId.trim()
    if (rowId.startsWith('tmp'))
      return { formLastModified: Math.floor(Date.now() / 1000), id: null, tmpId: rowId }
    if (!/^\d+$/.test(rowId))
      throw rpcError('INVALID_PARAMETER', `Invalid parameter rowId: "${rowId}"`)
    const result = await this.deletes.delete(actor, [Number(rowId)], {
      ...input,
      operation: 'deleteTableRow',
    })
    if (result.deleted === 0) throw rpcError('NOT_FOUND', `Row ${rowId} not found`)
    return { formLastModified: result.formLastModified, id: Number(rowId) }
  }

  /** deleteTableRows: `rows` is a list of ids; `tmp` ids are skipped. */
  async deleteRowList(
    actor: Actor,
    input: { rows: unknown[]; b_o?: string; bypassUrlTrigger?: boolean }
  ) {
    const ids: number[] = []
    for (const item of input.rows) {
      const key = String(item).trim()
      if (key.startsWith('tmp')) continue
      if (!/^\d+$/.test(key)) throw rpcError('INVALID_PARAMETER', `Invalid row id "${key}" in rows`)
      ids.push(Number(key))
    }
    if (ids.length === 0) return { deleted: 0, formLastModified: Math.floor(Date.now() / 1000) }
    return this.deletes.delete(actor, ids, { ...input, operation: 'deleteTableRows' })
  }
}
