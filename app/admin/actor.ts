import type { Actor } from '#core/rpc/base_operation'
import type ApiSession from '#models/api_session'
import { NO_RESTRICTIONS } from '#models/api_session'
import type User from '#models/user'

/**
 * The actor a console write runs as: the services' rules apply to `user`
 * (a book's owner, say), and the signed-in administrator is recorded as the
 * principal acting on that user's behalf (as a delegate is on api.php).
 * `address` (the request's) goes to the audit log.
 */
export function consoleActor(user: User, administrator: User, address?: string): Actor {
  return {
    address,
    user,
    principal: administrator,
    session: null as unknown as ApiSession,
    restrictions: { ...NO_RESTRICTIONS },
    onBehalf: user.id !== administrator.id,
  }
}
