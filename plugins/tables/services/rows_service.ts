import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { asObject } from '../lib/wire.js'
import { CellWriter, type CellInput } from './cell_writer.js'
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

/** Options every row write operation passes on. */
interface RowsInput {
  b_o?: string
  catId?: number
  linkSeparator?: string
  bypassUrlTrigger?: boolean
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
    private deletes: RowDeletes
  ) {}

  /** updateTableValue and the socket's update table value: one cell; a `tmp` rowId creates a row. */
  async updateValue(actor: Actor, input: CellInput): Promise<UpdateValueResult> {
    const categoryId = await this.access.inferCategory({ fieldId: input.fieldId })
    input = { ...input, operation: input.operation ?? 'updateTableValue' }
    if (await this.cells.write(actor, categoryId, input))
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
      }
    )
  }

  /** Writes rows given as {key, values} (the general path). */
  write(actor: Actor, writes: RowWrite[], options: WriteOptions): Promise<WriteResult> {
    return this.writer.write(actor, writes, options)
  }

  /** createOrUpdateTableRow: one row, `fieldValues` {fieldId: value}. */
  writeRow(
    actor: Actor,
    input: RowsInput & { rowId: string; fieldValues?: Record<string, unknown> }
  ) {
    return this.writer.write(actor, [{ key: input.rowId, values: input.fieldValues ?? {} }], {
      categoryId: input.catId || undefined,
      b_o: input.b_o,
      linkSeparator: input.linkSeparator,
      bypassUrlTrigger: input.bypassUrlTrigger,
      operation: 'createOrUpdateTableRow',
    })
  }

  /** createOrUpdateTableRows: `rows` {rowId: {fieldId: value}}; each row's values in any object form. */
  writeRows(actor: Actor, input: RowsInput & { rows: Record<string, unknown> }) {
    const writes = Object.entries(input.rows).map(([key, values]) => ({
      key,
      values: asObject(values, `rows[${key}]`),
    }))
    if (writes.length === 0) throw rpcError('MISSING_PARAMETER', 'Missing parameter: rows')
    return this.writer.write(actor, writes, {
      categoryId: input.catId || undefined,
      b_o: input.b_o,
      linkSeparator: input.linkSeparator,
      bypassUrlTrigger: input.bypassUrlTrigger,
      operation: 'createOrUpdateTableRows',
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
