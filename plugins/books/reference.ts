import { defineReference } from '#core/reference/types'

const book = { b_o: 'alice', b_c: 'team' }

/**
 * The books plugin's operations and socket messages as the API reference and
 * the MCP tools show them (docs/api-reference.md); parameters and limits come
 * from the operations' validators. Kept true to README.md.
 */
export default defineReference({
  operations: {
    getAllBooks: {
      summary: "The user's books and contacts",
      description:
        'The books the user is invited to or a member of, their contacts and counts. With `sstamp`, only the books and contacts changed since (a book left or lost comes back with `del` true); `nbBooks` and `nbContacts` stay totals. `b_o`/`b_c` keep one book.',
      returns: {
        sstamp: 'the server stamp to send next time',
        allBooks: '{nbBooks, nbContacts, contacts, books}',
      },
      example: { sstamp: 0 },
      errors: ['NOT_FOUND'],
    },
    getBookInfo: {
      summary: 'One book',
      description: 'One book the user is invited to or a member of, as getAllBooks answers it.',
      returns: { sstamp: 'server stamp', book: 'the book (2.2)' },
      example: book,
      errors: ['NOT_FOUND'],
    },
    getBookMessages: {
      summary: "A book's messages",
      description:
        "The book's messages by the five rules of spec 4.A.3: changed since `sstamp`, a window of smids (`smidFirst`, `smidLast`), a page of `nbMax`, or a text search (`search_string`).",
      returns: {
        sstamp: 'server stamp',
        b_o: 'owner',
        b_c: 'book code',
        bookMessages: 'messages (2.5)',
      },
      example: { ...book, nbMax: 50 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    sendMsg: {
      summary: 'Send or edit a message',
      description:
        "A new message in a book, or an edit of message `msg_id`. A resend of a known `uuid` answers the same message. The socket's send message (type 1) does the same. An SMS gateway's sesskey may call it for the sender `u_c` names (the book is then the first word of `msg` unless `b_c` is given).",
      returns: {
        sstamp: 'server stamp',
        createMessageId: 'the smid of the message',
        created: 'creation time',
        uuid: "the message's uuid",
      },
      example: { ...book, msg: 'Hello team', uuid: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT', 'GATEWAY_UNKNOWN_SENDER'],
    },
    deleteMsg: {
      summary: 'Delete a message',
      description:
        'Deletes message `msg_id`: its creator (right 2) or anyone with right 3. Members receive it with `del` true.',
      returns: { sstamp: 'server stamp' },
      example: { ...book, msg_id: 42 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    markBooksMessagesAsRead: {
      summary: 'Mark messages as read',
      description:
        'Moves the read mark of one book (`b_o`, `b_c`, optional `smid`: read up to that message), of several (`books`: a JSON array of {b_o, b_c} or of "b_o/b_c" strings) or, with neither, of every book of the user.',
      returns: { sstamp: 'server stamp', books: '[{b_o, b_c, lastMsgRead}]' },
      example: book,
      errors: ['NOT_FOUND'],
    },
    copyOrMoveMessage: {
      summary: 'Copy or move a message to another book',
      description:
        'Copies message `msg_id` into book `to_b_c` (owner `to_b_o`, default u_c); `move=1` (or `action=move`) moves it instead, deleting the original.',
      returns: {
        sstamp: 'server stamp',
        createMessageId: 'smid of the new message',
        uuid: 'its uuid',
        b_o: 'target owner',
        b_c: 'target book',
      },
      example: { ...book, msg_id: 42, to_b_c: 'archive', move: 1 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getBookEvents: {
      summary: "A book's calendar events",
      description:
        "The book's calendar events overlapping `dateMin`..`dateMax` (yyyy-mm-dd, whole UTC days), by start time; `limit` (default 100, at most 1000) and `page` (from 1); `events_ids` and `participants` narrow the list.",
      returns: {
        sstamp: 'server stamp',
        b_o: 'owner',
        b_c: 'book code',
        bookEvents: 'events (2.9)',
      },
      example: { ...book, dateMin: '2026-11-01', dateMax: '2026-11-30' },
      errors: ['NOT_FOUND'],
    },
    createBook: {
      summary: 'Create a book (extension)',
      description:
        'A book owned by u_c, who becomes its first member with right 4. `title` defaults to `b_c`; owner prefs as `ownerPrefs` (JSON or bracket form). Needs the user right createBook.',
      returns: { sstamp: 'server stamp', book: 'the new book' },
      example: { b_c: 'team', title: 'Team' },
      errors: ['CONFLICT', 'FORBIDDEN'],
    },
    updateBook: {
      summary: "Change a book's title, description or owner prefs (extension)",
      description: 'Title, description and owner prefs (covers...). Right 4.',
      returns: { sstamp: 'server stamp', book: 'the book' },
      example: { ...book, title: 'Team 2026' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    archiveBook: {
      summary: 'Archive a book (extension)',
      description: 'Right 4. An archived book stays readable; only unarchiveBook changes it.',
      returns: { sstamp: 'server stamp', book: 'the book' },
      example: book,
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    unarchiveBook: {
      summary: 'Unarchive a book (extension)',
      description: 'Right 4: the book can be written again.',
      returns: { sstamp: 'server stamp', book: 'the book' },
      example: book,
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    inviteMember: {
      summary: 'Invite a member (extension)',
      description:
        'Right 4 invites `member` (a user code, e-mail or phone) with `right` (default 2). The invitee sees the book with accepted false until acceptInvitation. An address with no account answers `pending` true: the link is sent there.',
      returns: {
        sstamp: 'server stamp',
        member: '{u_c, invite, right, del}',
        pending: 'true for an address with no account',
      },
      example: { ...book, member: 'bob', right: 2 },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
    },
    acceptInvitation: {
      summary: 'Accept an invitation (extension)',
      description:
        'The invitation becomes accepted; accepting twice is not an error. Also a socket system message.',
      returns: { sstamp: 'server stamp', book: 'the book' },
      example: book,
      errors: ['NOT_FOUND'],
    },
    declineInvitation: {
      summary: 'Decline an invitation (extension)',
      description:
        "A pending invitation is dropped; the book leaves the user's list (del true in a delta).",
      returns: { sstamp: 'server stamp' },
      example: book,
      errors: ['NOT_FOUND'],
    },
    removeMember: {
      summary: 'Remove a member (extension)',
      description:
        'Right 4 removes `member` or cancels their invitation. The owner cannot be removed; only the owner removes another administrator.',
      returns: { sstamp: 'server stamp', member: 'the member' },
      example: { ...book, member: 'bob' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    setMemberRight: {
      summary: "Set a member's right (extension)",
      description: "Right 4 sets `member`'s right (1 to 4); the owner's right is fixed.",
      returns: { sstamp: 'server stamp', member: 'the member' },
      example: { ...book, member: 'bob', right: 3 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    leaveBook: {
      summary: 'Leave a book (extension)',
      description:
        "Any member but the owner leaves; the book comes back with del true in the user's next delta.",
      returns: { sstamp: 'server stamp' },
      example: book,
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    updateBookUserPrefs: {
      summary: "A member's own prefs of a book (extension)",
      description:
        '`userPrefs` (JSON or bracket form, or top-level keys such as maxMsgsOffline), `favorite` and `order`. Needs only membership.',
      returns: { sstamp: 'server stamp', book: 'the book' },
      example: { ...book, favorite: 1 },
      errors: ['NOT_FOUND'],
    },
  },
  socket: {
    1: {
      summary: 'Send message',
      description:
        'The fields sendMsg reads, with its rules: `smid` 0 for a new message, >0 to edit; `del` true deletes. A resend of a known uuid answers the same smid. Answered by type 2 once committed.',
      example: {
        type: 1,
        o_u: 'alice',
        u_c: 'alice',
        sesskey: 'S',
        uuid: 'c1',
        smid: 0,
        b_o: 'alice',
        b_c: 'team',
        msg: 'Hello',
      },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
  },
  serverMessages: {
    receiveMessage: {
      type: 1,
      summary: 'Receive message',
      description:
        "A message created, edited or deleted (del true) in one of the user's books, by the socket, api.php or another plugin; sent to every socket of the book's accepted members but the one that sent it.",
      fields: {
        u_c: 'the creator',
        uuid: "the message's uuid",
        smid: 'its id',
        del: 'true for a deletion',
        created: 'creation time',
        msg: 'the text',
        b_o: 'book owner',
        b_c: 'book code',
        sstamp: 'stamp of the change',
        lastModified: 'last change time',
        nbMedias: 'attached media',
        nbDocs: 'attached documents',
        msgType: 'message type',
        msgColor: 'colour',
      },
      example: {
        type: 1,
        u_c: 'bob',
        uuid: 'c1',
        smid: 43,
        del: false,
        msg: 'Hi',
        b_o: 'alice',
        b_c: 'team',
        sstamp: 812,
      },
      errors: [],
    },
    receiveSystemMessage: {
      type: 11,
      summary: 'Receive system message',
      description: 'The effect of a system message (above), sent to the concerned sockets.',
      fields: {
        u_c: 'who did it',
        msg: 'the system message',
        b_o: 'book owner',
        b_c: 'book code',
        param: 'parameter',
        value: 'its value',
      },
      example: {
        type: 11,
        u_c: 'alice',
        msg: 'updateBookParam',
        b_o: 'alice',
        b_c: 'team',
        param: 'favorite',
        value: 1,
      },
      errors: [],
    },
  },
  systemMessages: {
    acceptInvitation: {
      summary: 'Accept an invitation',
      description: "The invitation to b_o/b_c is accepted; the book's members receive the type 11.",
      example: {
        type: 11,
        o_u: 'bob',
        sesskey: 'S',
        uuid: 'c2',
        msg: 'acceptInvitation',
        b_o: 'alice',
        b_c: 'team',
      },
      errors: ['NOT_FOUND'],
    },
    clearNotRead: {
      summary: 'Clear the unread count',
      description:
        "The read mark moves to the book's newest message (unread 0); the user's other devices receive the type 11.",
      example: {
        type: 11,
        o_u: 'alice',
        sesskey: 'S',
        uuid: 'c3',
        msg: 'clearNotRead',
        b_o: 'alice',
        b_c: 'team',
      },
      errors: ['NOT_FOUND'],
    },
    logOpenBook: {
      summary: 'Record a book opening',
      description:
        "The book's last opening is recorded (allowed to read-only sessions); the user's other devices receive the type 11.",
      example: {
        type: 11,
        o_u: 'alice',
        sesskey: 'S',
        uuid: 'c4',
        msg: 'logOpenBook',
        b_o: 'alice',
        b_c: 'team',
      },
      errors: ['NOT_FOUND'],
    },
    updateBookParam: {
      summary: 'Change a book parameter',
      description:
        "A member's own parameter (a userPrefs key, favorite, order) or, for an administrator, a book-wide one (an ownerPrefs key, description). Own: the user's other devices get the type 11; book-wide: every member.",
      example: {
        type: 11,
        o_u: 'alice',
        sesskey: 'S',
        uuid: 'c5',
        msg: 'updateBookParam',
        b_o: 'alice',
        b_c: 'team',
        param: 'favorite',
        value: 1,
      },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    updateUserInfo: {
      summary: "Change the user's own info",
      description:
        "A userPrefs parameter (fname, lname, lang...); the user's other devices receive the type 11.",
      example: {
        type: 11,
        o_u: 'alice',
        sesskey: 'S',
        uuid: 'c6',
        msg: 'updateUserInfo',
        param: 'lang',
        value: 'fr',
      },
      errors: ['INVALID_PARAMETER'],
    },
  },
})
