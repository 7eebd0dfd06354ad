import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { parseList } from '#core/json_column'
import type { FieldDef } from '../lib/field_types.js'
import { RowsService } from './rows_service.js'
import { TableAccess, type TableScope } from './table_access.js'
import { ValuesService } from './values_service.js'

/** A files cell a file is about to be attached to (CellFilesService.target). */
export interface FilesCellTarget {
  catId: number
  /** The row's id, or the tmp id of a row the attach creates. */
  rowKey: string
  isTmp: boolean
  field: FieldDef
  book: TableScope['book']
}

/**
 * Attaching a stored file to a `files` cell: what the tables plugin lets the
 * media plugin do to a cell. The media plugin knows files, not tables; it
 * calls these methods and never reads or writes a cell itself.
 */
@inject()
export class CellFilesService {
  constructor(
    private tableAccess: TableAccess,
    private values: ValuesService,
    private rows: RowsService
  ) {}

  /**
   * The files cell (rowId, or a tmp row id for a row the write creates, and
   * fieldId; the table is worked out from the field), checked before the
   * file is stored: the actor may write the table, the field is a files
   * field, the row exists.
   */
  async target(
    actor: Actor,
    input: { rowId?: string; fieldId?: number; b_o?: string; b_c?: string }
  ): Promise<FilesCellTarget> {
    const rowKey = String(input.rowId ?? '').trim()
    if (input.fieldId === undefined)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: fieldId', { field: 'fieldId' })
    if (rowKey === '')
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: rowId', { field: 'rowId' })
    const isTmp = rowKey.startsWith('tmp')
    if (!isTmp && !/^\d+$/.test(rowKey))
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter rowId: not a row id', {
        field: 'rowId',
      })
    const catId = await this.tableAccess.inferCategory({ fieldId: input.fieldId })
    const scope = await this.tableAccess.forCategory(actor, catId, 'write', input.b_o)
    if (input.b_c && input.b_c !== scope.book.b_c) throw rpcError('NOT_FOUND', 'Table not found')
    const field = scope.category.fields.find((candidate) => candidate.id === input.fieldId)
    if (!field || field.type !== 'files')
      throw rpcError('INVALID_PARAMETER', `Field ${input.fieldId} is not a files field`, {
        field: 'fieldId',
      })
    const target: FilesCellTarget = { catId, rowKey, isTmp, field, book: scope.book }
    await this.readCell(actor, target)
    return target
  }

  /**
   * Appends a file to the cell's list (a read-modify-write: the caller runs
   * one attach per cell at a time, the media plugin's SharedLock). Answers
   * the row's id (the new row's for a tmp id) and how many files of the
   * entry's `type` the cell lists. Without bypassUrlTrigger the write takes
   * api.php's default (urlTriggerDefaults), as every other table write does.
   */
  async attach(
    actor: Actor,
    target: FilesCellTarget,
    entry: { type: string } & Record<string, unknown>,
    options: { bypassUrlTrigger?: boolean } = {}
  ) {
    const list = await this.readCell(actor, target)
    list.push(entry)
    const written = await this.rows.updateValue(actor, {
      rowId: target.rowKey,
      fieldId: target.field.id,
      value: list,
      b_o: target.book.b_o,
      bypassUrlTrigger: options.bypassUrlTrigger,
      source: 'api',
    })
    const rowId = target.isTmp ? Number(written.newRows[0]?.id ?? 0) : Number(target.rowKey)
    return { rowId, sameType: list.filter((item) => item.type === entry.type).length }
  }

  /** The cell's list of files (a tmp row has none yet); NOT_FOUND for a row that is gone. */
  private async readCell(actor: Actor, target: FilesCellTarget) {
    if (target.isTmp) return []
    const { tableValues } = await this.values.subset(actor, {
      catId: target.catId,
      b_o: target.book.b_o,
      fieldIds: [target.field.id],
      rowIds: [Number(target.rowKey)],
    })
    if (tableValues.length === 0) throw rpcError('NOT_FOUND', `Row ${target.rowKey} not found`)
    return parseList(tableValues[0][0])
  }
}
