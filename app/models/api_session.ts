import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { jsonColumn } from '#core/json_column'

/** What a session is limited to (createSesskey's `restrictions`). */
export interface SessionRestrictions {
  carnet_code: string | null
  carnet_owner: string | null
  readonly: boolean
  hideTables: boolean
  hideMessages: boolean
  hideEvents: boolean
  internal: boolean
}

export const NO_RESTRICTIONS: SessionRestrictions = Object.freeze({
  carnet_code: null,
  carnet_owner: null,
  readonly: false,
  hideTables: false,
  hideMessages: false,
  hideEvents: false,
  internal: false,
})

/** A sesskey: the credential sent with every request after login. */
export default class ApiSession extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare userId: number

  @column()
  declare applicationId: number | null

  @column()
  declare oauthKeyId: number | null

  @column({ serializeAs: null })
  declare keyHash: string

  @column(jsonColumn<SessionRestrictions>(() => ({ ...NO_RESTRICTIONS })))
  declare restrictions: SessionRestrictions

  @column()
  declare revokedReason: string | null

  @column.dateTime({ autoCreate: true })
  declare createdAt: DateTime

  @column.dateTime()
  declare lastUsedAt: DateTime | null

  @column.dateTime()
  declare expiresAt: DateTime | null

  @column.dateTime()
  declare revokedAt: DateTime | null
}
