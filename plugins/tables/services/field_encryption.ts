import { inject } from '@adonisjs/core'
import limiter from '@adonisjs/limiter/services/main'
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { rpcError } from '#core/rpc/errors'
import { parseBoundedJson } from '#core/rpc/nesting'
import { rowTableName, type FieldDef, type FieldType } from '../lib/field_types.js'
import type { CategoryMeta } from './meta_service.js'
import { rowPages } from './row_pages.js'

type Row = Record<string, any>

/** The field types whose values may be stored encrypted (text values; see README "Encrypted fields"). */
export const ENCRYPTABLE_TYPES: readonly FieldType[] = [
  'shorttext',
  'mediumtext',
  'email',
  'phone',
  'url',
]

/** What a locked cell (its field not unlocked by the request) answers instead of its value. */
export const ENCRYPTED_MASK = '********'

/** Stored values start with it: the version of the format below. */
const SEALED_PREFIX = 'qe1:'
const NONCE_BYTES = 12
const TAG_BYTES = 16
const SALT_BYTES = 16
/** scrypt cost (N = 2^14, r = 8, p = 1: ~16 MB and tens of milliseconds per unlock). */
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }
/** Passwords longer than this are refused (scrypt reads all of it). */
const MAX_PASSWORD_LENGTH = 1024
/**
 * Wrong passwords a user may give for one field per window before RATE_LIMITED (a right one
 * clears the count): guessing online costs the guesser time. The kernel's limiter (memory, or
 * Redis shared by every instance); keyed by the field's salt, so a new field starts afresh.
 */
export const PASSWORD_GUESSES = { requests: 10, duration: '15 minutes' }

/** Stored in the field's options (never answered): the key's salt and a verifier of the password. */
export interface EncryptionSetup {
  salt: string
  verifier: string
}

/** Keys of the fields a request unlocked (fieldId -> AES-256 key), for that request only. */
export type UnlockedFields = ReadonlyMap<number, Buffer>

export const isEncrypted = (field: Pick<FieldDef, 'options'>) => Boolean(field.options.encryption)

const locked = (field: FieldDef) =>
  rpcError(
    'ENCRYPTED_FIELD_LOCKED',
    `Field "${field.name}" (${field.id}) is encrypted: give its password in encryptedFieldPasswords`,
    { field: 'encryptedFieldPasswords', fieldId: field.id }
  )

const badMap = (reason: string) =>
  rpcError('INVALID_PARAMETER', `Invalid parameter encryptedFieldPasswords: ${reason}`, {
    field: 'encryptedFieldPasswords',
  })

/** 64 bytes from scrypt: the first 32 are the AES key, the last 32 prove the password (hashed). */
function derive(password: string, salt: Buffer): Promise<{ key: Buffer; verifier: Buffer }> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 64, SCRYPT, (error, bytes) => {
      if (error) return reject(error)
      resolve({
        key: bytes.subarray(0, 32),
        verifier: createHash('sha256').update(bytes.subarray(32)).digest(),
      })
    })
  )
}

/** The associated data of a value: it belongs to that field of that row, and nowhere else. */
const associated = (fieldId: number, rowId: number) => Buffer.from(`quire-cell:${fieldId}:${rowId}`)

/**
 * Encrypted fields (README "Encrypted fields"): values stored with AES-256-GCM (a fresh nonce
 * per value, the field and row ids as associated data) under a key derived by scrypt from the
 * field's password and salt. The server keeps only the salt and a verifier; a request unlocks a
 * field by giving its password (encryptedFieldPasswords), and the key lives for that request.
 * Passwords and keys are never logged, stored or answered.
 */
@inject()
export class FieldEncryption {
  /** A new field's setup from its password: a fresh salt and the password's verifier. */
  async setup(password: string): Promise<EncryptionSetup> {
    this.checkPassword(password, 'encryptionPassword')
    const salt = randomBytes(SALT_BYTES)
    const { verifier } = await derive(password, salt)
    return { salt: salt.toString('base64'), verifier: verifier.toString('base64') }
  }

  /**
   * The key of `field` if `password` is its password, else ENCRYPTION_PASSWORD_WRONG; RATE_LIMITED
   * (with retryAfter) once `userId` gave PASSWORD_GUESSES wrong ones in the window.
   */
  async keyOf(field: FieldDef, password: string, userId: number | null): Promise<Buffer> {
    const setup = field.options.encryption!
    const guesses = limiter.use(PASSWORD_GUESSES)
    const [throttled, key] = await guesses.penalize(
      `tables-field-password:${setup.salt}:${userId ?? 'public'}`,
      async () => {
        const derived = await derive(password, Buffer.from(setup.salt, 'base64'))
        const expected = Buffer.from(setup.verifier, 'base64')
        if (
          expected.length !== derived.verifier.length ||
          !timingSafeEqual(expected, derived.verifier)
        )
          throw rpcError(
            'ENCRYPTION_PASSWORD_WRONG',
            `The password given for field "${field.name}" (${field.id}) is not its password`,
            { field: 'encryptedFieldPasswords', fieldId: field.id }
          )
        return derived.key
      }
    )
    if (throttled) {
      const retryAfter = Math.max(1, throttled.response.availableIn)
      throw rpcError(
        'RATE_LIMITED',
        `Too many wrong passwords for field ${field.id}: retry in ${retryAfter} seconds`,
        { retryAfter, fieldId: field.id }
      )
    }
    return key
  }

  checkPassword(password: unknown, name: string): asserts password is string {
    if (typeof password !== 'string' || password === '')
      throw rpcError('MISSING_PARAMETER', `Missing parameter: ${name}`, { field: name })
    if (password.length > MAX_PASSWORD_LENGTH)
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter ${name}: more than ${MAX_PASSWORD_LENGTH} characters`,
        { field: name }
      )
  }

  /**
   * encryptedFieldPasswords ({fieldId: password}, JSON or an object) read against a table: every
   * id must name an encrypted field of it and every password must be right, or nothing is
   * unlocked. Absent or empty: nothing unlocked.
   */
  async unlock(
    category: CategoryMeta,
    raw: unknown,
    userId: number | null
  ): Promise<UnlockedFields> {
    const unlocked = new Map<number, Buffer>()
    if (raw === undefined || raw === null || raw === '') return unlocked
    let map: unknown = raw
    if (typeof raw === 'string') {
      try {
        map = parseBoundedJson(raw)
      } catch {
        throw badMap('a JSON object {fieldId: password}')
      }
    }
    if (typeof map !== 'object' || map === null || Array.isArray(map))
      throw badMap('a JSON object {fieldId: password}')
    // The whole map is checked before any password is tried.
    const entries = Object.entries(map).map(([id, password]) => {
      const field = /^\d+$/.test(id.trim())
        ? category.fields.find((candidate) => candidate.id === Number(id))
        : undefined
      if (!field) throw badMap(`${JSON.stringify(id)} is not a field of table "${category.name}"`)
      if (!isEncrypted(field)) throw badMap(`field ${field.id} is not encrypted`)
      if (typeof password !== 'string' || password === '' || password.length > MAX_PASSWORD_LENGTH)
        throw badMap(`the password of field ${field.id} is not a non-empty text`)
      return { field, password }
    })
    for (const { field, password } of entries)
      unlocked.set(field.id, await this.keyOf(field, password, userId))
    return unlocked
  }

  seal(key: Buffer, fieldId: number, rowId: number, plaintext: string): string {
    const nonce = randomBytes(NONCE_BYTES)
    const cipher = createCipheriv('aes-256-gcm', key, nonce)
    cipher.setAAD(associated(fieldId, rowId))
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return SEALED_PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64')
  }

  /** The plaintext of a stored value; null when it does not open (another row's, or damaged). */
  open(key: Buffer, fieldId: number, rowId: number, sealed: string): string | null {
    if (!sealed.startsWith(SEALED_PREFIX)) return null
    const bytes = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64')
    if (bytes.length < NONCE_BYTES + TAG_BYTES) return null
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES))
      decipher.setAAD(associated(fieldId, rowId))
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
      const body = bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8')
    } catch {
      return null
    }
  }

  /**
   * Rows read for an answer: each encrypted cell becomes its plaintext when the request
   * unlocked its field, else ENCRYPTED_MASK (an empty cell stays empty). In place, before the
   * rows are serialized.
   */
  reveal(category: CategoryMeta, rows: Row[], unlocked: UnlockedFields = new Map()) {
    for (const field of category.fields) {
      if (!isEncrypted(field) || !field.column) continue
      const key = unlocked.get(field.id)
      for (const row of rows) {
        const stored = row[field.column]
        if (stored === null || stored === undefined || stored === '') continue
        row[field.column] = key
          ? (this.open(key, field.id, Number(row.id), String(stored)) ?? ENCRYPTED_MASK)
          : ENCRYPTED_MASK
      }
    }
  }

  /** A write's answer (serialized cells by field id): encrypted cells as `reveal` shows them. */
  revealCells(
    category: CategoryMeta,
    rows: { id: number; fields: Record<string, { value: unknown; text?: string }> }[],
    unlocked: UnlockedFields = new Map()
  ) {
    for (const field of category.fields) {
      if (!isEncrypted(field)) continue
      const key = unlocked.get(field.id)
      for (const row of rows) {
        const cell = row.fields[String(field.id)]
        if (!cell || typeof cell.value !== 'string' || cell.value === '') continue
        cell.value = key
          ? (this.open(key, field.id, row.id, cell.value) ?? ENCRYPTED_MASK)
          : ENCRYPTED_MASK
      }
    }
  }

  /**
   * RowWriter's hook, called with a write's rows before anything is written: every encrypted
   * value given must be unlocked (ENCRYPTED_FIELD_LOCKED otherwise: nothing is written). Values
   * of existing rows are sealed in place; those of new rows are taken out (the row is inserted
   * without them) and `sealInserted` seals and writes them once the rows have their ids, so no
   * plaintext ever reaches the table.
   */
  sealWrite(
    category: CategoryMeta,
    rows: { state: Row; isNew: boolean; prepared: { columns: Row } }[],
    unlocked: UnlockedFields = new Map()
  ) {
    const held: { state: Row; field: FieldDef; key: Buffer; plaintext: string }[] = []
    for (const field of category.fields) {
      if (!isEncrypted(field) || !field.column) continue
      for (const row of rows) {
        if (!(field.column in row.prepared.columns)) continue
        const key = unlocked.get(field.id)
        if (!key) throw locked(field)
        const plaintext = row.state[field.column]
        if (plaintext === null || plaintext === undefined) continue
        if (row.isNew) {
          held.push({ state: row.state, field, key, plaintext: String(plaintext) })
          row.state[field.column] = null
        } else
          row.state[field.column] = this.seal(
            key,
            field.id,
            Number(row.state.id),
            String(plaintext)
          )
      }
    }
    return {
      sealInserted: async (trx: TransactionClientContract) => {
        for (const entry of held) {
          const sealed = this.seal(
            entry.key,
            entry.field.id,
            Number(entry.state.id),
            entry.plaintext
          )
          entry.state[entry.field.column!] = sealed
          await trx
            .from(rowTableName(category.id))
            .where('id', entry.state.id)
            .update({ [entry.field.column!]: sealed })
        }
      },
    }
  }

  /**
   * A new password for `field` (updateField): every stored value is opened with the old key and
   * sealed with the new one in the caller's transaction, so the field is never half re-encrypted.
   * Answers the new setup for the field's options.
   */
  async rekey(
    trx: TransactionClientContract,
    category: CategoryMeta,
    field: FieldDef,
    change: { from: string; to: string; userId: number }
  ): Promise<EncryptionSetup> {
    const oldKey = await this.keyOf(field, change.from, change.userId)
    const setup = await this.setup(change.to)
    const { key } = await derive(change.to, Buffer.from(setup.salt, 'base64'))
    const table = rowTableName(category.id)
    const column = field.column!
    // Read in the transaction (MariaDB: locked), so no write slips in between.
    const pages = rowPages(category.id, { columns: ['id', column], client: trx, lock: true })
    for await (const rows of pages) {
      for (const row of rows) {
        if (row[column] === null || row[column] === undefined) continue
        const rowId = Number(row.id)
        const plaintext = this.open(oldKey, field.id, rowId, String(row[column]))
        // A value that does not open (damaged) is left as it is rather than lost.
        if (plaintext === null) continue
        await trx
          .from(table)
          .where('id', rowId)
          .update({ [column]: this.seal(key, field.id, rowId, plaintext) })
      }
    }
    return setup
  }
}
