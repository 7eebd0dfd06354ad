import type { Objects } from './world.js'

/**
 * How the suite fills an operation's or a socket message's parameters to aim
 * it at someone's objects, from the parameter names its validator declares
 * (read from the plugin registry): a new operation using the usual names is
 * aimed at the victim the day it lands, with no change here.
 */

/** Who the request is aimed at, and what the caller owns (a destination of copies). */
export interface Aim {
  target: Objects
  mine: Objects
  /** A user code of the target book (for member operations). */
  memberCode: string
}

type Filler = (aim: Aim, operation: string) => unknown

const COMMENT_OPERATIONS = new Set([
  'editTableValueComments',
  'deleteTableValueComments',
  'getTableValueComments',
])

/** Parameters that name a book, table, row, field, view, tab, message, event or comment. */
export const TARGET_PARAMS: Record<string, Filler> = {
  b_o: ({ target }) => target.b_o,
  b_c: ({ target }) => target.b_c,
  catId: ({ target }) => target.catId,
  catCode: ({ target }) => target.catCode,
  rowId: ({ target }) => String(target.rowId),
  fieldId: ({ target }, operation) =>
    COMMENT_OPERATIONS.has(operation)
      ? target.talkField
      : operation === 'getReferenceFieldValues'
        ? target.linkField
        : target.nameField,
  p_field_hz: ({ target }) => target.nameField,
  viewId: ({ target }) => target.viewId,
  view_id: ({ target }) => target.viewId,
  tabId: ({ target }) => target.tabId,
  tab_id: ({ target }) => target.tabId,
  msg_id: ({ target }) => target.smid,
  smid: ({ target }) => target.smid,
  events_ids: ({ target }) => [target.eventId],
  rowIds: ({ target }) => [target.rowId, target.otherRowId],
  fieldIds: ({ target }) => [target.nameField],
  filterRowIds: ({ target }) => [target.rowId],
  ids: ({ target }) => [target.commentId],
  id: ({ target }) => target.commentId,
  rows: ({ target }, operation) =>
    operation === 'deleteTableRows'
      ? [target.rowId]
      : { [target.rowId]: { [target.nameField]: 'authz probe' } },
  fieldValues: ({ target }) => ({ [target.nameField]: 'authz probe' }),
  tokenId: ({ target }) => target.tokenId,
  webhookId: ({ target }) => target.webhookId,
  // No delivery exists in the suite's world (its webhook is off): any id is someone else's.
  deliveryId: () => 1,
}

/** Other parameters: a harmless value of the right kind (the target is what matters). */
const PAYLOAD_PARAMS: Record<string, Filler> = {
  // A copy or move goes to the caller's own book: only the source is someone else's.
  to_b_o: ({ mine }) => mine.b_o,
  to_b_c: ({ mine }) => mine.b_c,
  member: ({ memberCode }) => memberCode,
  right: () => 1,
  title: () => 'authz probe',
  name: () => 'authz probe',
  msg: () => 'authz probe',
  m: () => 'authz probe',
  // updateBookParam's value follows its param (favorite: a flag).
  value: (_aim, operation) => (operation === 'updateBookParam' ? 1 : 'authz probe'),
  type: () => 'shorttext',
  operation: () => 'count',
  param: () => 'favorite',
  url: () => 'http://localhost:9/authz-probe',
  events: () => 'row.updated',
  // rollBackBeforeChange: some change id (the row is the target).
  changeId: () => 1,
}

/** Parameters left out for one operation (another way to aim it, tried elsewhere). */
const OMIT: Record<string, string[]> = {
  // Aimed at the victim's message; the file-cell form is the same check on a row.
  fileUpload: ['rowId', 'fieldId'],
}

/** The parameters of `operation` aimed at `aim.target`. */
export function aimAt(operation: string, params: string[], aim: Aim) {
  const filled: Record<string, unknown> = {}
  for (const name of params) {
    if (OMIT[operation]?.includes(name)) continue
    const fill = TARGET_PARAMS[name] ?? PAYLOAD_PARAMS[name]
    if (fill) filled[name] = fill(aim, operation)
  }
  return filled
}

/** Whether some parameter names a book's object. */
export const touchesBook = (params: string[]) => params.some((name) => name in TARGET_PARAMS)

/** Whether some parameter names an object inside a book (not only the book). */
export const namesObject = (params: string[]) =>
  params.some((name) => name in TARGET_PARAMS && name !== 'b_o' && name !== 'b_c')

/** The refusals that mean "not yours / not allowed", as opposed to a malformed request. */
export const AUTHZ_CODES = [
  'NOT_FOUND',
  'FORBIDDEN',
  'RESTRICTED_SESSION',
  'READONLY_SESSION',
  'INVALID_SESSKEY',
  'SESSION_EXPIRED',
  'ON_BEHALF_DENIED',
  'USER_MISMATCH',
]
