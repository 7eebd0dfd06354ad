import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import {
  FIELD_TYPES,
  ROLLUP_FUNCTIONS,
  SYSTEM_COLUMNS,
  convertInput,
  displayText,
  hasSideTable,
  rowTableName,
  sideTableName,
  storageOf,
  type FieldDef,
  type FieldOptions,
  type FieldType,
} from '../lib/field_types.js'
import { parseFormula } from '../lib/formula.js'
import '../events.js'
import { assertRoomFor, settingJson } from '../lib/limits.js'
import { fixedCodeBase, fixedCodeCandidate } from '../lib/fixed_code.js'
import { asList, asObject, flagOr } from '../lib/wire.js'
import { ENCRYPTABLE_TYPES, FieldEncryption, isEncrypted } from './field_encryption.js'
import { MetaService, type CategoryMeta } from './meta_service.js'
import { RecomputeService } from './recompute_service.js'
import { rowIdPages, rowPages } from './row_pages.js'
import { RowWriter } from './row_writer.js'
import { dropPivotIndexOn } from './pivot_index.js'
import { SchemaService } from './schema_service.js'
import { bumpMetaVersion, countOf, intParam, invalid, unix } from './structure_support.js'
import { TableAccess } from './table_access.js'

/** A field's definition as createField and updateField validate it (validators/params.ts). */
export interface FieldInput {
  b_o?: string
  name?: string
  type?: string
  code?: string
  description?: string
  readOnly?: boolean
  order?: number
  options?: Record<string, any>
  /** createField: store the values encrypted under `encryptionPassword` (README "Encrypted fields"). */
  encrypted?: boolean
  /** createField: the new field's password; updateField: its current one, to change it. */
  encryptionPassword?: string
  /** updateField: the password that replaces encryptionPassword (the values are re-encrypted). */
  newEncryptionPassword?: string
}

/**
 * Fields (extensions to the spec, see README.md): createField, updateField (a type change
 * converts the data), deleteField. Metadata is written in a stamped transaction; the row
 * table's DDL runs outside it (MariaDB commits DDL implicitly).
 */
@inject()
export class FieldStructure {
  constructor(
    private stamps: StampService,
    private meta: MetaService,
    private recompute: RecomputeService,
    private writer: RowWriter,
    private schema: SchemaService,
    private access: TableAccess,
    private encryption: FieldEncryption
  ) {}

  /** Validates type options against the table (links in the same book, lookups through this table's links). */
  private async fieldOptions(
    category: CategoryMeta,
    type: FieldType,
    given: Record<string, any> = {},
    previous: FieldOptions = {}
  ): Promise<FieldOptions> {
    const options: FieldOptions = { ...previous }
    if (given.values !== undefined) options.values = asList(given.values, 'values').map(String)
    if (given.enumColors !== undefined) {
      const colors = asObject(given.enumColors, 'enumColors')
      options.enumColors = {
        values: asList(colors.values, 'enumColors.values').map((item) => {
          const object = asObject(item, 'enumColors.values')
          return { value: String(object.value ?? ''), color: String(object.color ?? '') }
        }),
        strict: flagOr(colors.strict, false),
        displayColors: flagOr(colors.displayColors, true),
      }
    }
    if (given.strict !== undefined) {
      options.enumColors = {
        values: options.enumColors?.values ?? [],
        displayColors: options.enumColors?.displayColors ?? true,
        strict: flagOr(given.strict, false),
      }
    }
    if (options.enumColors && !options.values)
      options.values = options.enumColors.values.map((item) => item.value)
    for (const key of ['dateFormat', 'numformat', 'formula', 'template'] as const)
      if (given[key] !== undefined) options[key] = String(given[key])
    if (given.templateFormat !== undefined) {
      if (!['text', 'html'].includes(String(given.templateFormat)))
        throw invalid('options.templateFormat is text or html')
      options.templateFormat = String(given.templateFormat) as 'text' | 'html'
    }
    if (given.withTime !== undefined) options.withTime = flagOr(given.withTime, false)
    if (given.multiple !== undefined) options.multiple = flagOr(given.multiple, false)
    if (given.resultType !== undefined) {
      if (!['number', 'text'].includes(String(given.resultType)))
        throw invalid('options.resultType is number or text')
      options.resultType = String(given.resultType) as 'number' | 'text'
    }
    for (const key of ['linkCatId', 'linkFieldId', 'targetFieldId', 'linkViewId'] as const) {
      if (given[key] !== undefined) options[key] = intParam(given[key], `options.${key}`)
    }
    if (given.rollup !== undefined) {
      if (!ROLLUP_FUNCTIONS.includes(String(given.rollup) as any))
        throw invalid(`options.rollup is one of ${ROLLUP_FUNCTIONS.join(', ')}`)
      options.rollup = String(given.rollup) as any
    }

    if (type === 'link') {
      if (!options.linkCatId) throw invalid('A link field needs options.linkCatId')
      const target = await this.meta.category(options.linkCatId)
      if (!target || target.form.id !== category.formId)
        throw invalid(`options.linkCatId ${options.linkCatId} is not a table of this book`)
      // linkViewId (0: none) restricts the rows a link may point to (getReferenceFieldValues).
      if (options.linkViewId && !target.category.views.some((v) => v.id === options.linkViewId))
        throw invalid(`options.linkViewId ${options.linkViewId} is not a view of the linked table`)
    }
    if (type === 'lookup' || type === 'rollup') {
      const link = category.fields.find(
        (field) => field.id === options.linkFieldId && field.type === 'link'
      )
      if (!link) throw invalid('options.linkFieldId must name a link field of this table')
      const target = await this.meta.category(link.options.linkCatId!)
      const targetField = target?.category.fields.find(
        (field) => field.id === options.targetFieldId
      )
      if (!targetField && !(type === 'rollup' && options.rollup === 'count')) {
        throw invalid('options.targetFieldId must name a field of the linked table')
      }
      // A lookup would store the ciphertext elsewhere, where no password reveals it.
      if (targetField && isEncrypted(targetField))
        throw rpcError(
          'ENCRYPTED_FIELD_UNSEARCHABLE',
          `Field "${targetField.name}" (${targetField.id}) is encrypted: no lookup or rollup reads it`,
          { field: 'options.targetFieldId', fieldId: targetField.id }
        )
      if (type === 'rollup' && !options.rollup) options.rollup = 'count'
    }
    if (type === 'formula') {
      try {
        parseFormula(options.formula ?? '')
      } catch (error) {
        throw invalid(`Invalid formula: ${(error as Error).message}`)
      }
      if (!options.resultType) options.resultType = 'number'
    }
    return options
  }

  private fieldType(raw: string | undefined): FieldType {
    const type = (raw ?? '').trim()
    if (!(FIELD_TYPES as readonly string[]).includes(type))
      throw invalid(`Unknown field type "${type}"`)
    return type as FieldType
  }

  async createField(actor: Actor, categoryId: number, input: FieldInput) {
    const { category } = await this.access.forCategory(actor, categoryId, 'admin', input.b_o)
    const name = (input.name ?? '').trim()
    if (!name) throw rpcError('MISSING_PARAMETER', 'Missing parameter: name')
    const type = this.fieldType(input.type)
    if (category.fields.some((field) => field.name.toLowerCase() === name.toLowerCase())) {
      throw rpcError('CONFLICT', `Table "${category.name}" already has a field named "${name}"`)
    }
    const options = await this.fieldOptions(category, type, input.options)
    if (input.encrypted)
      options.encryption = await this.encryptionOf(type, input.encryptionPassword)
    const stored = storageOf({ type, options }) !== 'none' && !SYSTEM_COLUMNS[type]
    const fieldId = await this.stamps.write(async ({ trx, stamp }) => {
      // Bumped first: the table's row lock makes two fields created at once in one table pick
      // their fixed codes one after the other.
      await bumpMetaVersion(trx, this.meta, category.id, stamp)
      assertRoomFor(
        'fieldsPerTable',
        await countOf(trx, 'table_fields', 'category_id', category.id)
      )
      const top = await trx
        .from('table_fields')
        .where('category_id', category.id)
        .max('order as top')
        .first()
      const [id] = await trx.table('table_fields').insert({
        category_id: category.id,
        name,
        code: input.code || null,
        fixed_code: await this.freeFixedCode(trx, category.id, name),
        type,
        order: input.order ?? Number(top?.top ?? 0) + 1,
        description: input.description ?? null,
        read_only: input.readOnly ?? false,
        options: settingJson(options, 'options'),
        sstamp: stamp,
        updated_at: unix(),
      })
      if (stored)
        await trx
          .from('table_fields')
          .where('id', id)
          .update({ column_name: `f${id}` })
      return Number(id)
    })
    try {
      await this.schema.addField(
        category.id,
        { id: fieldId, type, options },
        stored ? `f${fieldId}` : null
      )
    } catch (error) {
      await this.stamps.write(async ({ trx, stamp }) => {
        await trx.from('table_fields').where('id', fieldId).delete()
        await bumpMetaVersion(trx, this.meta, category.id, stamp)
      })
      throw error
    }
    this.meta.invalidate(category.id)
    if (['lookup', 'rollup', 'formula', 'autoincrement'].includes(type))
      await this.fillComputed(category.id, fieldId)
    return fieldId
  }

  /**
   * The fixed code a new field named `name` gets (lib/fixed_code.ts): its name's code, suffixed
   * when another field of the table has it. Each candidate is checked by the database, so a code
   * its collation deems equal to a taken one (MariaDB compares without case) counts as taken.
   */
  private async freeFixedCode(trx: TransactionClientContract, categoryId: number, name: string) {
    const base = fixedCodeBase(name)
    // Ends: the candidates differ from each other, and a table holds a bounded number of fields.
    for (let attempt = 1; ; attempt++) {
      const candidate = fixedCodeCandidate(base, attempt)
      const taken = await trx
        .from('table_fields')
        .where('category_id', categoryId)
        .where('fixed_code', candidate)
        .select('id')
        .first()
      if (!taken) return candidate
    }
  }

  /** Computes a new computed column for existing rows (autoincrement: numbered in row order). */
  private async fillComputed(categoryId: number, fieldId: number) {
    const found = await this.meta.category(categoryId)
    const field = found?.category.fields.find((candidate) => candidate.id === fieldId)
    if (!field?.column) return
    if (field.type === 'autoincrement') {
      let next = 1
      for await (const ids of rowIdPages(categoryId)) {
        await this.stamps.write(async ({ trx }) => {
          for (const id of ids)
            await trx
              .from(rowTableName(categoryId))
              .where('id', id)
              .update({ [field.column!]: next++ })
        })
      }
      return
    }
    await this.recompute.recomputeAll(categoryId)
  }

  async field(fieldId: number): Promise<{ category: CategoryMeta; field: FieldDef }> {
    const categoryId = await this.meta.categoryOfField(fieldId)
    const found = categoryId ? await this.meta.category(categoryId) : null
    const field = found?.category.fields.find((candidate) => candidate.id === fieldId)
    if (!found || !field) throw rpcError('NOT_FOUND', `Field ${fieldId} not found`)
    return { category: found.category, field }
  }

  /** An encrypted field's setup: a type that holds text, and a password. */
  private async encryptionOf(type: FieldType, password: string | undefined) {
    if (!ENCRYPTABLE_TYPES.includes(type))
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter encrypted: a ${type} field cannot be encrypted (${ENCRYPTABLE_TYPES.join(', ')} can)`,
        { field: 'encrypted' }
      )
    this.encryption.checkPassword(password, 'encryptionPassword')
    return this.encryption.setup(password)
  }

  /** What updateField may change of an encrypted field: not its type nor its encryption. */
  private checkEncryptedUpdate(field: FieldDef, input: FieldInput, type: FieldType) {
    if (input.encrypted !== undefined && input.encrypted !== isEncrypted(field))
      throw invalid('Invalid parameter encrypted: a field is encrypted (or not) from its creation')
    if (input.newEncryptionPassword !== undefined && !isEncrypted(field))
      throw invalid(`Invalid parameter newEncryptionPassword: field ${field.id} is not encrypted`)
    if (isEncrypted(field) && type !== field.type)
      throw invalid(`Invalid parameter type: field ${field.id} is encrypted, its type stays`)
    if (input.newEncryptionPassword === undefined) return null
    this.encryption.checkPassword(input.encryptionPassword, 'encryptionPassword')
    this.encryption.checkPassword(input.newEncryptionPassword, 'newEncryptionPassword')
    return { from: input.encryptionPassword, to: input.newEncryptionPassword }
  }

  async updateField(actor: Actor, fieldId: number, input: FieldInput) {
    const { category, field } = await this.field(fieldId)
    await this.access.forCategory(actor, category.id, 'admin', input.b_o)
    const type = input.type ? this.fieldType(input.type) : field.type
    const passwordChange = this.checkEncryptedUpdate(field, input, type)
    const options = await this.fieldOptions(
      category,
      type,
      input.options,
      type === field.type ? field.options : {}
    )
    const name = input.name !== undefined ? input.name.trim() : field.name
    if (!name) throw invalid('Invalid parameter name: empty')
    if (
      category.fields.some(
        (other) => other.id !== field.id && other.name.toLowerCase() === name.toLowerCase()
      )
    ) {
      throw rpcError('CONFLICT', `Table "${category.name}" already has a field named "${name}"`)
    }
    const oldStorage = SYSTEM_COLUMNS[field.type] ? 'none' : storageOf(field)
    const newStorage = SYSTEM_COLUMNS[type] ? 'none' : storageOf({ type, options })
    const rebuild =
      type !== field.type ||
      oldStorage !== newStorage ||
      hasSideTable(field) !== hasSideTable({ type, options })
    let newColumn = field.column
    if (rebuild) {
      // A type change: a new column (and side table), filled by converting every value, then the old one dropped.
      await this.schema.releaseColumn(category.id, field)
      newColumn = newStorage === 'none' ? null : `f${field.id}_${Date.now().toString(36)}`
      const next: FieldDef = { ...field, type, options, column: newColumn }
      if (hasSideTable(field))
        await db
          .connection()
          .schema.renameTable(
            sideTableName(category.id, field.id),
            `${sideTableName(category.id, field.id)}_old`
          )
      await this.schema.addField(category.id, next, newColumn)
      await this.convertColumn(category, field, next)
      if (hasSideTable(field))
        await db
          .connection()
          .schema.dropTableIfExists(`${sideTableName(category.id, field.id)}_old`)
    }
    await this.stamps.write(async ({ trx, stamp }) => {
      // A new password re-encrypts every value in this transaction, with the field's new setup.
      if (passwordChange)
        options.encryption = await this.encryption.rekey(trx, category, field, {
          ...passwordChange,
          userId: actor.user.id,
        })
      await trx
        .from('table_fields')
        .where('id', field.id)
        .update({
          name,
          type,
          options: settingJson(options, 'options'),
          column_name: newColumn,
          code: input.code !== undefined ? input.code || null : field.code,
          description: input.description ?? field.description,
          read_only: input.readOnly ?? field.readOnly,
          order: input.order ?? field.order,
          sstamp: stamp,
          updated_at: unix(),
        })
      await bumpMetaVersion(trx, this.meta, category.id, stamp)
    })
    if (rebuild && field.column) {
      await dropPivotIndexOn(category.id, [field.column])
      await this.schema.dropColumns(
        category.id,
        field.type === 'link' ? [field.column, `${field.column}_t`] : [field.column]
      )
    }
    if (['lookup', 'rollup', 'formula', 'link'].includes(type) || rebuild)
      await this.recompute.recomputeAll(category.id)
  }

  /** Converts the values of a field into its new type; values that do not convert become empty. */
  private async convertColumn(category: CategoryMeta, from: FieldDef, to: FieldDef) {
    const table = rowTableName(category.id)
    const oldColumn = from.column ?? (SYSTEM_COLUMNS[from.type] as string | undefined)
    if (!oldColumn || !to.column) return
    for await (const rows of rowPages(category.id, { size: 1000 })) {
      await this.stamps.write(async ({ trx }) => {
        const sideRows: { row_id: number; value: string | number; pos: number }[] = []
        for (const row of rows) {
          const source =
            from.type === 'link' || (from.type === 'enum' && from.options.multiple)
              ? JSON.parse(row[oldColumn] ?? '[]')
              : displayText(from, row)
          let converted
          try {
            converted = convertInput(
              to,
              Array.isArray(source) &&
                to.type !== 'link' &&
                !(to.type === 'enum' && to.options.multiple)
                ? source.join(', ')
                : source
            )
          } catch {
            converted = { value: null, list: [] }
          }
          await trx
            .from(table)
            .where('id', row.id)
            .update({ [to.column!]: converted.value })
          if (hasSideTable(to))
            (converted.list ?? []).forEach((value, pos) =>
              sideRows.push({ row_id: Number(row.id), value, pos })
            )
        }
        await this.writer.insertPlain(trx, sideTableName(category.id, to.id), sideRows)
      })
    }
  }

  async deleteField(actor: Actor, fieldId: number, b_o?: unknown) {
    const { category, field } = await this.field(fieldId)
    await this.access.forCategory(actor, category.id, 'admin', b_o)
    const dependents = await db
      .from('table_fields')
      .whereIn('type', ['lookup', 'rollup'])
      .select('id', 'name', 'options')
    const dependent = dependents.find(
      (row) =>
        Number(JSON.parse(row.options ?? '{}').linkFieldId) === field.id ||
        Number(JSON.parse(row.options ?? '{}').targetFieldId) === field.id
    )
    if (dependent)
      throw rpcError(
        'CONFLICT',
        `Field "${dependent.name}" (${dependent.id}) reads this field: delete it first`
      )
    await this.schema.releaseColumn(category.id, field)
    await this.stamps.write(async ({ trx, stamp }) => {
      await trx.from('table_filters').where('field_id', field.id).delete()
      await trx.from('table_fields').where('id', field.id).delete()
      await bumpMetaVersion(trx, this.meta, category.id, stamp)
    })
    if (field.column) await dropPivotIndexOn(category.id, [field.column])
    await this.schema.dropField(category.id, field)
    await emitter.emit('tables:fields_deleted', {
      categoryId: category.id,
      fieldIds: [field.id],
      table: false,
    })
  }
}
