import vine from '@vinejs/vine'
import { flag, int, looseText, object, stamp, text } from '#core/rpc/wire'
import { TABLE_LIMITS } from '../lib/limits.js'

/**
 * Parameters several tables operations share. Most nested values are read
 * by the core wire rules (object(), list(), flag(), int()), which take an
 * empty value as "not given". A few stay raw (vine.any()) because an empty
 * value means something there and the service reads it: `filterGroup=`,
 * `card=`, `calendar=`, `hiddenFields=` clear a view's setting, and filterRowIds also takes `1,2,3` / `!1,2,3`.
 */

/**
 * The owner of the table's book: optional, checked against the table when given. Read with the
 * rule createTable and getBookTables read it with (text()): trimmed, blank is "not given", a JSON
 * number is read as its digits; a list or an object is refused.
 */
export const ownerField = { b_o: text().optional() }

/**
 * encryptedFieldPasswords ({fieldId: password}, JSON or an object): the encrypted fields a read
 * shows or a write writes (services/field_encryption.ts reads it, so its noks name it).
 */
export const unlockField = { encryptedFieldPasswords: vine.any().optional() }

/** A row or form token (the token operations, no session): a non-blank text of bounded length. */
export const tokenField = { token: text().maxLength(200) }

/**
 * One cell write, as updateTableValue (api.php) and the socket's update table value (type 13)
 * both read it: one set of rules, so a value gets the same verdict on both entry points
 * (tests/functional/socket/same_verdict.spec.ts). rowId is a non-blank text (a row id, or `tmp...`
 * to create a row; a JSON number, as socket clients send it, is read as its digits), fieldId an
 * id (digits or a JSON number), value as sent (the field's type reads it, RowWriter), and
 * bypassUrlTrigger a flag.
 */
export const cellFields = {
  ...ownerField,
  rowId: text(),
  fieldId: stamp(),
  value: vine.any().optional(),
  bypassUrlTrigger: flag().optional(),
}

/** A page of values: getTableValues and getNamedTableValues. */
export const valuesOptions = {
  filterRowIds: vine.any().optional(),
  tabId: stamp().optional(),
  offset: stamp().optional(),
  maxRows: stamp().optional(),
  format: vine.string().optional(),
  maxComments: int().optional(),
  getAllViews: flag().optional(),
  getDependencies: flag().optional(),
}

/** A field's definition (createField, updateField); `type` is required by createField only. */
export const fieldFields = {
  name: looseText().maxLength(TABLE_LIMITS.nameLength).optional(),
  description: looseText().maxLength(TABLE_LIMITS.descriptionLength).optional(),
  code: looseText().maxLength(TABLE_LIMITS.codeLength).optional(),
  order: int().optional(),
  readOnly: flag().optional(),
  options: object().optional(),
  // Encrypted fields (README "Encrypted fields"): passwords are taken as sent, never trimmed.
  encrypted: flag().optional(),
  encryptionPassword: vine.string().optional(),
  newEncryptionPassword: vine.string().optional(),
}

/** A view's definition: createView and updateView take the same parameters. */
export const viewFields = {
  name: looseText().maxLength(TABLE_LIMITS.nameLength).optional(),
  description: looseText().maxLength(TABLE_LIMITS.descriptionLength).optional(),
  code: looseText().maxLength(TABLE_LIMITS.codeLength).optional(),
  order: int().optional(),
  presentation: looseText().maxLength(32).optional(),
  locked: flag().optional(),
  filterGroup: vine.any().optional(),
  card: vine.any().optional(),
  calendar: vine.any().optional(),
  hiddenFields: vine.any().optional(),
}

/** A tab's settings: createTab and updateTab (`view_id`, or `viewId`, names the view shown; empty or 0 detaches it). */
export const tabFields = {
  view_id: looseText().optional(),
  viewId: looseText().optional(),
  order: int().optional(),
  hidden: flag().optional(),
}

/** One field of createTable's `fields`: read as createField reads its parameters. */
export const fieldValidator = vine.compile(vine.object({ ...fieldFields, type: looseText() }))
