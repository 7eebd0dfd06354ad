import type { Actor, OperationArea } from '#core/rpc/base_operation'
import { enforceRestrictions } from '#core/auth/restrictions'

/**
 * The area a stored file belongs to, for sessions that hide one
 * (createSesskey's hideMessages, hideTables): a message's attachment is part
 * of the messages, a file cell's of the tables; a profile image or a cover
 * belongs to neither.
 */
export function areaOfFile(file: { purpose: string }): OperationArea | undefined {
  if (file.purpose === 'message') return 'messages'
  if (file.purpose === 'cell') return 'tables'
  return undefined
}

/**
 * The kernel's restriction step (read-only, hidden areas, a session
 * restricted to one book) for media entry points whose area is known only
 * from their target: fileUpload, the tus creation, the session-bound /dbi
 * forms, a cover taken from a file of the book. Throws RESTRICTED_SESSION or
 * READONLY_SESSION like every operation.
 */
export function enforceMediaRestrictions(
  actor: Actor,
  action: { label: string; writes: boolean; area: OperationArea | undefined },
  book: { b_o?: string; b_c?: string } = {}
) {
  enforceRestrictions(action, actor, { b_o: book.b_o, b_c: book.b_c })
}
