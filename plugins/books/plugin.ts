import { definePlugin } from '#core/plugins/define_plugin'

/** Books, members, invitations, contacts, messages and calendar events (see README.md). */
export default definePlugin({
  id: 'books',
  version: '0.1.0',
  description: 'Books, members, invitations, contacts, messages and calendar events',
  operations: {
    // Spec operations (docs/spec/service-interface.md 4.A.3, 4.A.7)
    getAllBooks: () => import('./operations/get_all_books.js'),
    getBookInfo: () => import('./operations/get_book_info.js'),
    getBookMessages: () => import('./operations/get_book_messages.js'),
    sendMsg: () => import('./operations/send_msg.js'),
    deleteMsg: () => import('./operations/delete_msg.js'),
    markBooksMessagesAsRead: () => import('./operations/mark_books_messages_as_read.js'),
    copyOrMoveMessage: () => import('./operations/copy_or_move_message.js'),
    getBookEvents: () => import('./operations/get_book_events.js'),
    // Extensions (README.md, "Extensions")
    createBook: () => import('./operations/create_book.js'),
    updateBook: () => import('./operations/update_book.js'),
    archiveBook: () => import('./operations/archive_book.js'),
    unarchiveBook: () => import('./operations/unarchive_book.js'),
    inviteMember: () => import('./operations/invite_member.js'),
    acceptInvitation: () => import('./operations/accept_invitation.js'),
    declineInvitation: () => import('./operations/decline_invitation.js'),
    removeMember: () => import('./operations/remove_member.js'),
    setMemberRight: () => import('./operations/set_member_right.js'),
    leaveBook: () => import('./operations/leave_book.js'),
    updateBookUserPrefs: () => import('./operations/update_book_user_prefs.js'),
  },
  // Socket (docs/spec/service-interface.md part 6): send message, system messages, and the events forwarded to sockets.
  socket: {
    1: () => import('./socket/send_message.js'),
  },
  systemMessages: {
    acceptInvitation: () => import('./socket/accept_invitation.js'),
    clearNotRead: () => import('./socket/clear_not_read.js'),
    logOpenBook: () => import('./socket/log_open_book.js'),
    updateBookParam: () => import('./socket/update_book_param.js'),
    updateUserInfo: () => import('./socket/update_user_info.js'),
  },
  // Descriptions and examples for the API reference and MCP tools (docs/api-reference.md).
  reference: () => import('./reference.js'),
  realtime: () => import('./socket/realtime.js'),
  userInfo: () => import('./user_info.js'),
  demo: () => import('./database/demo.js'),
  provider: () => import('./provider.js'),
  // GET /invite/:token, the link of an invitation to an address with no account.
  routes: () => import('./routes.js'),
  // Console pages (/admin/books): admin/routes.ts, admin/pages/*.tsx.
  admin: {
    nav: [{ label: 'Books' }],
    routes: () => import('./admin/routes.js'),
    dashboard: () => import('./admin/dashboard.js'),
    liveEvents: [
      'books:message_created',
      'books:message_updated',
      'books:message_deleted',
      'books:book_updated',
      'books:member_changed',
    ],
  },
  // Read on every use through the settings service (docs/settings.md): a change applies at once.
  settings: [
    {
      key: 'addressInvitationTtlDays',
      label: 'Invitation link lifetime',
      help: 'Days an invitation sent to an e-mail address or phone number with no account stays valid.',
      type: 'integer',
      default: 14,
      min: 1,
      max: 365,
      env: 'BOOKS_ADDRESS_INVITATION_TTL_DAYS',
      runtime: true,
    },
    {
      key: 'messagesDeltaMax',
      label: 'Messages sent at most since a sync point',
      help: 'When an app asks for the messages changed since its last sync, at most this many are sent in one answer.',
      type: 'integer',
      default: 5000,
      min: 100,
      max: 100_000,
      env: 'BOOKS_MESSAGES_DELTA_MAX',
      runtime: true,
    },
  ],
})
