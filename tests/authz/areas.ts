import type { OperationArea } from '#core/rpc/base_operation'
import type { Objects } from './world.js'

/**
 * The area of every registered operation and socket message, written here
 * and reviewed, never read from the `static area` of the code under test:
 * an operation that forgets to declare its area (the media operations did)
 * is then refused nothing, and only a list of its own shows the gap.
 *
 * - an area: a session hiding it (createSesskey's hideMessages, hideTables,
 *   hideEvents) is refused the operation with RESTRICTED_SESSION;
 * - 'none': no session restriction hides it (key creation, books, members,
 *   the caller's own state);
 * - 'by target': the area is the target's (TARGET_AIMS aims it at each).
 */
export type ExpectedArea = OperationArea | 'none' | 'by target'

export const OPERATION_AREAS: Record<string, ExpectedArea> = {
  // Kernel: keys, sessions and the caller's account.
  createAppkey: 'none',
  createOauthkey: 'none',
  createSesskey: 'none',
  getOrCreateSessKey: 'none',
  dropAllSessions: 'none',
  getUserInfo: 'none',
  // Books and their members.
  acceptInvitation: 'none',
  archiveBook: 'none',
  createBook: 'none',
  declineInvitation: 'none',
  getAllBooks: 'none',
  getBookInfo: 'none',
  inviteMember: 'none',
  leaveBook: 'none',
  removeMember: 'none',
  setMemberRight: 'none',
  unarchiveBook: 'none',
  updateBook: 'none',
  updateBookUserPrefs: 'none',
  // Messages and events.
  copyOrMoveMessage: 'messages',
  deleteMsg: 'messages',
  getBookMessages: 'messages',
  markBooksMessagesAsRead: 'messages',
  sendMsg: 'messages',
  getBookEvents: 'events',
  // Tables.
  computeTableOperation: 'tables',
  createField: 'tables',
  createOrUpdateTableRow: 'tables',
  createOrUpdateTableRows: 'tables',
  createTab: 'tables',
  createTable: 'tables',
  createTableToken: 'tables',
  createView: 'tables',
  deleteField: 'tables',
  deleteTab: 'tables',
  deleteTable: 'tables',
  deleteTableRow: 'tables',
  deleteTableRows: 'tables',
  deleteTableValueComments: 'tables',
  deleteView: 'tables',
  editTableValueComments: 'tables',
  getBookTables: 'tables',
  getNamedTableValues: 'tables',
  getReferenceFieldValues: 'tables',
  getRowHistory: 'tables',
  getTableRows: 'tables',
  getTableValueComments: 'tables',
  getTablePivotValues: 'tables',
  getTableValueSubset: 'tables',
  getTableValues: 'tables',
  listTableRowsById: 'tables',
  listTableTokens: 'tables',
  renderSmartTextField: 'tables',
  rollBackBeforeChange: 'tables',
  revokeTableToken: 'tables',
  updateField: 'tables',
  updateTab: 'tables',
  updateTable: 'tables',
  updateTableValue: 'tables',
  updateView: 'tables',
  // Rows and forms by token: no session (the token is the credential), so no session hides them.
  addNewTableRowByViewToken: 'none',
  getNewTableRowByViewToken: 'none',
  getTableRowByToken: 'none',
  updateTableRowByToken: 'none',
  // SMS gateways and push devices: the caller's own devices.
  registerSMSGateway: 'none',
  unregisterSMSGateway: 'none',
  updatePushId: 'none',
  // A gateway's own outbound SMS (a gateway's sesskey only: no user session to restrict).
  getGatewayOutbox: 'none',
  ackGatewayOutbox: 'none',
  // Webhooks: a table's subscription reports its rows (tables), a book's its messages (messages).
  createWebhook: 'by target',
  listWebhooks: 'by target',
  // Named by webhookId (or deliveryId): the suite aims them at the victim's table webhook.
  deleteWebhook: 'tables',
  getWebhookDeliveries: 'tables',
  redeliverWebhook: 'none', // the suite's world has no delivery: its id is refused as unknown
  rotateWebhookSecret: 'tables',
  testWebhook: 'tables',
  updateWebhook: 'tables',
  // Media: a message's file is part of the messages, a file cell's of the tables.
  fileUpload: 'by target',
  resumableUpload: 'none', // answers the tus URL; the tus creation checks the target (media tests)
  setBookCover: 'none', // the book's cover; one taken from a file of the book: that file's area
  setProfileImage: 'none',
}

/** A name resolved from /etc/hosts to loopback: never a packet off this machine. */
const PROBE_URL = 'http://localhost:9/authz-probe'
const bookPair = (book: Objects) => ({ b_o: book.b_o, b_c: book.b_c })

/** For 'by target' operations: the parameters aiming it at the victim's object of each area. */
export const TARGET_AIMS: Record<
  string,
  Partial<Record<OperationArea, (book: Objects) => Record<string, unknown>>>
> = {
  fileUpload: {
    messages: (book) => ({ b_o: book.b_o, b_c: book.b_c, smid: book.smid }),
    tables: (book) => ({ b_o: book.b_o, rowId: String(book.rowId), fieldId: book.filesField }),
  },
  // The owner's control creates these: on deletions only, which no test of the suite makes (the
  // victim's book is checked unchanged); were one ever due, PROBE_URL names loopback, which the
  // delivery guard refuses before connecting (loopback is not allowed outside webhook tests).
  createWebhook: {
    messages: (book) => ({ ...bookPair(book), url: PROBE_URL, events: 'message.deleted' }),
    tables: (book) => ({ b_o: book.b_o, catId: book.catId, url: PROBE_URL, events: 'row.deleted' }),
  },
  listWebhooks: {
    messages: (book) => bookPair(book),
    tables: (book) => ({ b_o: book.b_o, catId: book.catId }),
  },
}

/** The same for socket message types (`type N`) and system messages. */
export const SOCKET_AREAS: Record<string, ExpectedArea> = {
  'type 1': 'messages',
  'type 13': 'tables',
  'acceptInvitation': 'none',
  'clearNotRead': 'messages',
  'logOpenBook': 'none',
  'updateBookParam': 'none',
  'updateUserInfo': 'none',
}

/**
 * What a list of areas misses: registered names it does not list (their area
 * was never reviewed) and names it lists that are no longer registered.
 */
export function areaListGaps(registered: string[], list: Record<string, ExpectedArea>) {
  return {
    unlisted: registered.filter((name) => !(name in list)),
    noLongerRegistered: Object.keys(list).filter((name) => !registered.includes(name)),
  }
}
