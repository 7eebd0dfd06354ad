import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'

/** One user authorized in one application. */
export default class OauthKey extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare applicationId: number

  @column()
  declare userId: number

  @column({ serializeAs: null })
  declare keyHash: string

  @column.dateTime({ autoCreate: true })
  declare createdAt: DateTime

  @column.dateTime()
  declare lastUsedAt: DateTime | null

  @column.dateTime()
  declare revokedAt: DateTime | null
}
