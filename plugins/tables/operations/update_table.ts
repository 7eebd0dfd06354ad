import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, int, looseText, object, stamp } from '#core/rpc/wire'
import { StructureService } from '../services/structure_service.js'
import { ownerField } from '../validators/params.js'
import { TABLE_LIMITS } from '../lib/limits.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    catId: stamp(),
    name: looseText().maxLength(TABLE_LIMITS.nameLength).optional(),
    description: looseText().maxLength(TABLE_LIMITS.descriptionLength).optional(),
    code: looseText().maxLength(TABLE_LIMITS.codeLength).optional(),
    order: int().optional(),
    locked: flag().optional(),
    rights: object().optional(),
    prefs: object().optional(),
    public: flag().optional(),
    triggerUpdateUrl: looseText().maxLength(TABLE_LIMITS.urlLength).optional(),
  })
)

/** updateTable (extension, see README.md). */
@inject()
export default class UpdateTable extends BaseOperation {
  static operation = 'updateTable'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private structure: StructureService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    await this.structure.updateTable(ctx.actor!, input.catId, input)
    return { catId: input.catId }
  }
}
