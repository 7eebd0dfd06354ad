import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { jsonColumn } from '#core/json_column'

/** A person (or bot) known to Quire; `code` is the wire u_c / o_u. */
export default class User extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare code: string

  @column()
  declare email: string | null

  @column()
  declare phone: string | null

  @column({ serializeAs: null })
  declare password: string

  @column()
  declare firstName: string

  @column()
  declare lastName: string

  /** Free-form user preferences (userPrefs keys of the spec beyond the ones derived from columns). */
  @column(jsonColumn<Record<string, unknown>>(() => ({})))
  declare prefs: Record<string, unknown>

  /** Right name -> granted, merged over the defaults of the users service. */
  @column(jsonColumn<Record<string, boolean>>(() => ({})))
  declare rights: Record<string, boolean>

  /** Colour name -> hex, merged over the default palette. */
  @column(jsonColumn<Record<string, string>>(() => ({})))
  declare colors: Record<string, string>

  @column()
  declare projectId: number

  /** SQLite answers booleans as 0/1. */
  @column({ consume: (value) => Boolean(value) })
  declare isAdmin: boolean

  @column({ consume: (value) => Number(value) })
  declare sstamp: number

  @column()
  declare uimgStamp: number

  @column.dateTime()
  declare lastConnectionAt: DateTime | null

  @column.dateTime()
  declare previousConnectionAt: DateTime | null

  /** Set when an administrator disabled the account: every sign-in is refused. */
  @column.dateTime()
  declare disabledAt: DateTime | null

  /** Password sign-in on api.php turned off (createOauthkey answers PASSWORD_SIGN_IN_DISABLED). */
  @column({ consume: (value) => Boolean(value) })
  declare apiPasswordDisabled: boolean

  @column.dateTime({ autoCreate: true })
  declare createdAt: DateTime

  @column.dateTime({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime | null
}
