import { defineReference } from '#core/reference/types'

const T = { b_o: 'alice' }

/**
 * The tables plugin's operations and socket messages as the API reference and
 * the MCP tools show them (docs/api-reference.md); parameters and limits come
 * from the operations' validators. Kept true to README.md.
 */
export default defineReference({
  operations: {
    addNewTableRowByViewToken: {
      summary: 'Add a row through a form token (no session)',
      description:
        "A new row from a form (view) token's fields; only the fields the form shows are written.",
      returns: { rowId: 'the new row id' },
      example: { token: 'ft_0123456789abcdef', fieldValues: { '12': 'Ada' } },
      errors: ['TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'TOKEN_READONLY', 'RATE_LIMITED'],
    },
    computeTableOperation: {
      summary: 'Count the rows of a selection',
      description:
        '`operation` count: the number of rows `filterRowIds` selects, by one SQL COUNT.',
      returns: { sstamp: 'server stamp', catId: 'the table', result: 'the count' },
      example: { ...T, catId: 7, operation: 'count' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    createField: {
      summary: 'Create a field (extension)',
      description:
        'A field of table `catId` with `name` and `type`; optional code, description, readOnly, order, options (JSON), encrypted + encryptionPassword.',
      returns: { catId: 'the table', fieldId: 'the new field id' },
      example: { ...T, catId: 7, name: 'Status', type: 'shorttext' },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
    },
    createOrUpdateTableRow: {
      summary: 'Create or update one row',
      description:
        'One row: `rowId` (a `tmp...` id creates it) and `fieldValues` {fieldId: value}. Answers `rows` with one element carrying the real id.',
      returns: {
        catId: 'the table',
        newRows: 'tmp ids with their real ids',
        rows: 'one row with its real id',
        formLastModified: 'time of the write',
      },
      example: { ...T, catId: 7, rowId: 'tmp1', fieldValues: { '12': 'Ada' } },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'ENCRYPTED_FIELD_LOCKED', 'ENCRYPTION_PASSWORD_WRONG'],
    },
    createOrUpdateTableRows: {
      summary: 'Create or update several rows',
      description:
        '`rows` {rowId: {fieldId: value}} (JSON or bracket form); `tmp...` ids create rows, in one transaction.',
      returns: {
        catId: 'the table',
        modified: 'rows changed',
        created: 'rows created',
        newRows: 'tmp ids with their real ids',
      },
      example: { ...T, catId: 7, rows: { 'tmp1': { '12': 'Ada' }, '5': { '12': 'Grace' } } },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'ENCRYPTED_FIELD_LOCKED', 'ENCRYPTION_PASSWORD_WRONG'],
    },
    createTab: {
      summary: 'Create a tab (extension)',
      description: 'A tab of table `catId` showing view `view_id`; optional order, hidden.',
      returns: { tabId: 'the new tab id' },
      example: { ...T, catId: 7, view_id: 3 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    createTable: {
      summary: 'Create a table (extension)',
      description:
        'A new table (category) in book b_o/b_c with a default view and tab; optional description, code, initial `fields` (JSON list of {name, type, code, options}), public.',
      returns: { catId: 'table id', viewId: 'default view', tabId: 'default tab' },
      example: { b_o: 'alice', b_c: 'team', name: 'Contacts' },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
    },
    createTableToken: {
      summary: 'Create a row or form token',
      description:
        'A row token (`rowId`) or a form token (`viewId`), optionally read-only or expiring; the token is answered once.',
      returns: {
        token: 'the token (shown once)',
        tokenId: 'its id',
        kind: 'row or form',
        expiresAt: 'expiry or null',
      },
      example: { ...T, catId: 7, rowId: 5, readOnly: 1 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    createView: {
      summary: 'Create a view (extension)',
      description:
        'A view of table `catId`: name, presentation (grid, card, calendar, form, kanban, gallery), filterGroup, hiddenFields...',
      returns: { viewId: 'the new view id' },
      example: { ...T, catId: 7, name: 'Open', presentation: 'grid' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    deleteField: {
      summary: 'Delete a field (extension)',
      description: 'Refused (CONFLICT) while a lookup or rollup reads it.',
      returns: { fieldId: 'the deleted field' },
      example: { ...T, fieldId: 12 },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
    },
    deleteTab: {
      summary: 'Delete a tab (extension)',
      description: 'Deletes tab `tabId`.',
      returns: { tabId: 'the deleted tab' },
      example: { ...T, tabId: 4 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    deleteTable: {
      summary: 'Delete a table (extension)',
      description: 'Deletes table `catId`; refused (CONFLICT) while another table links to it.',
      returns: { catId: 'the deleted table' },
      example: { ...T, catId: 7 },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
    },
    deleteTableRow: {
      summary: 'Delete a row',
      description:
        'Deletes row `rowId`; answers the row id, and tmpId when the client sent a temporary id.',
      returns: { formLastModified: 'stamp of the write', rowId: 'the row id' },
      example: { ...T, rowId: 5 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    deleteTableRows: {
      summary: 'Delete several rows',
      description: '`rows` is a list of ids (JSON, `rows[0]=5` or `5,6`); tmp ids are skipped.',
      returns: { deleted: 'rows deleted', formLastModified: 'time of the write' },
      example: { ...T, catId: 7, rows: [5, 6] },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    deleteTableValueComments: {
      summary: "Delete a cell's comments",
      description:
        "Deletes comments `ids` of a cell; each must be the caller's own unless the caller administers the book.",
      returns: { fieldId: 'field', rowId: 'row', deleted: 'the ids deleted' },
      example: { ...T, fieldId: 14, rowId: 5, ids: [3] },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    deleteView: {
      summary: 'Delete a view (extension)',
      description: 'Deletes view `viewId`.',
      returns: { viewId: 'the deleted view' },
      example: { ...T, viewId: 3 },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
    },
    editTableValueComments: {
      summary: 'Add or change a cell comment',
      description:
        'Adds comment `m` to a cell of a comments field, or changes comment `id` (its author only). Answers the thread as getTableValueComments.',
      returns: { id: 'the comment id', fieldId: 'field', rowId: 'row', data: 'the thread' },
      example: { ...T, fieldId: 14, rowId: 5, m: 'Checked' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getBookTables: {
      summary: "A book's tables (structure)",
      description:
        "The book's smart-table container: tables, fields, views, tabs (no row content). Public tables answer without a session.",
      returns: { sstamp: 'server stamp', bookTables: 'the container (2.6): tabs and categories' },
      example: { b_o: 'alice', b_c: 'team' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getNamedTableValues: {
      summary: 'Rows by sync codes',
      description:
        'getTableValues naming the table and fields by their codes (`catCode`, `fieldCodes`) instead of ids.',
      returns: {
        sstamp: 'server stamp',
        catId: 'the table',
        tableValues: 'the rows and their values (2.7)',
      },
      example: { b_o: 'alice', b_c: 'team', catCode: 'contacts', fieldCodes: 'name,email' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getNewTableRowByViewToken: {
      summary: "A form token's form (no session)",
      description: 'The form of a view token: fields, types, default values, required fields.',
      returns: { form: '{catId, viewId, name, fields...}' },
      example: { token: 'ft_0123456789abcdef' },
      errors: ['TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'RATE_LIMITED'],
    },
    getRowHistory: {
      summary: "A row's change history",
      description:
        'The recorded changes of row `rowId` (or of one cell with `fieldId`), newest first, `nbMax` per page, with their `total`.',
      returns: {
        catId: 'the table',
        rowId: 'the row',
        total: 'number of changes',
        changes: 'the changes, newest first',
      },
      example: { ...T, rowId: 5, nbMax: 20 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getReferenceFieldValues: {
      summary: 'Rows a link field may point to',
      description:
        'The rows link field `fieldId` may point to, with their display text; `search_string`, `offset`, `maxRows` page them.',
      returns: {
        sstamp: 'server stamp',
        fieldId: 'the link field',
        catId: 'the linked table',
        values: 'the rows with their display text',
        total: "the rows matching, counted up to 1,000 (or up to the page's end when further)",
        totalCapped:
          'true when more rows match than `total` (then the cap): read it as "more than"',
      },
      example: { ...T, fieldId: 15, maxRows: 20 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getTablePivotValues: {
      summary: 'A pivot of a table',
      description:
        'A two-way aggregate of the rows (spec 2.6 pivot settings: horizontal `p_field_hz`, vertical `p_field_vt`, value `p_field_va`, operation `p_field_co`), computed by SQL.',
      returns: {
        sstamp: 'server stamp',
        catId: 'the table',
        settings: 'the pivot settings applied',
        pivot: 'the aggregate cells',
      },
      example: { ...T, catId: 7, p_field_hz: 12, p_field_vt: 13, p_field_co: 'count' },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'ENCRYPTED_FIELD_UNSEARCHABLE'],
    },
    getTableRowByToken: {
      summary: "A row token's row (no session)",
      description: "The token's row with the fields its view shows.",
      returns: {
        catId: 'the table',
        readOnly: 'whether the token only reads',
        row: 'the row with the fields its view shows',
      },
      example: { token: 'rt_0123456789abcdef' },
      errors: ['TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'RATE_LIMITED'],
    },
    getTableRows: {
      summary: 'Rows in the mobile format (deprecated)',
      description:
        'Pages of rows in the mobile (`rows`) format; deprecated since 6.47 (use getTableValues).',
      returns: {
        sstamp: 'server stamp',
        catId: 'the table',
        rows: 'the page of rows',
        page: 'page',
        pageSize: 'rows per page',
      },
      example: { ...T, catId: 7, pageSize: 100, page: 1 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getTableValueComments: {
      summary: "A cell's comment thread",
      description:
        "The comment thread of one cell, oldest first, with its summary and authors; the reader's unread count of the cell drops to 0.",
      returns: { fieldId: 'field', rowId: 'row', data: 'the thread' },
      example: { ...T, fieldId: 14, rowId: 5 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getTableValueSubset: {
      summary: 'Chosen cells',
      description:
        'The cells of `rowIds` × `fieldIds`: rows in the order of rowIds, values in the order of fieldIds.',
      returns: {
        sstamp: 'server stamp',
        catId: 'the table',
        tableValues: 'the rows and their values (2.7)',
      },
      example: { ...T, catId: 7, rowIds: [5, 6], fieldIds: [12, 13] },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    getTableValues: {
      summary: 'A page of rows of a table',
      description:
        'A page of rows of table `catId` (`offset`, `maxRows`), filtered and sorted by SQL through a tab or view, with values in the requested `format`.',
      returns: {
        sstamp: 'server stamp',
        catId: 'the table',
        tableValues: 'the rows and their values (2.7)',
      },
      example: { ...T, catId: 7, offset: 0, maxRows: 100 },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'ENCRYPTED_FIELD_UNSEARCHABLE'],
    },
    listTableRowsById: {
      summary: 'Rows by id, optionally through a view',
      description:
        "Rows of a table, optionally through a view's filters, optionally only those modified after a unix time (`lastModifiedAfter`).",
      returns: {
        sstamp: 'server stamp',
        catId: 'the table',
        tableValues: 'the rows and their values (2.7)',
      },
      example: { ...T, catId: 7, lastModifiedAfter: '1764115200' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    listTableTokens: {
      summary: "A table's tokens",
      description: "The table's row and form tokens (never the tokens themselves).",
      returns: {
        catId: 'the table',
        tokens:
          '[{tokenId, kind, rowId, viewId, readOnly, createdBy, createdAt, expiresAt, revokedAt}] (never the token)',
      },
      example: { ...T, catId: 7 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    renderSmartTextField: {
      summary: 'Render a smart text field',
      description: "Renders a smart text field's template from a row and stores it in the cell.",
      returns: {
        catId: 'the table',
        rowId: 'the row',
        fieldId: 'the field',
        value: 'the rendered text',
      },
      example: { ...T, catId: 7, rowId: 5, fieldId: 16 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    rollBackBeforeChange: {
      summary: 'Roll a row back before a change',
      description:
        'Restores a row to its state before a recorded change (`changeId`) or before a stamp (`sstamp`), undoing every later change of the row; `scope=change` rolls back every row that write touched. Recorded like any write.',
      returns: {
        catId: 'the table',
        rowIds: 'the rows restored',
        formLastModified: 'time of the write',
      },
      example: { ...T, rowId: 5, changeId: 901 },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
    },
    revokeTableToken: {
      summary: 'Revoke a table token',
      description: 'The token stops working at once (TOKEN_REVOKED).',
      returns: { tokenId: 'the revoked token', revokedAt: 'when' },
      example: { ...T, tokenId: 9 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    updateField: {
      summary: 'Change a field (extension)',
      description:
        'Name, type (converts the data; unconvertible values become empty), code, description, readOnly, order, options, encryption password.',
      returns: { fieldId: 'the field' },
      example: { ...T, fieldId: 12, name: 'Full name' },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT', 'ENCRYPTION_PASSWORD_WRONG'],
    },
    updateTab: {
      summary: 'Change a tab (extension)',
      description: 'view_id, order, hidden of tab `tabId`.',
      returns: { tabId: 'the tab' },
      example: { ...T, tabId: 4, hidden: 1 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    updateTable: {
      summary: 'Change a table (extension)',
      description:
        'Name, description, code, order, locked, rights {modify, select}, prefs, triggerUpdateUrl, public.',
      returns: { catId: 'the table' },
      example: { ...T, catId: 7, name: 'People' },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
    },
    updateTableRowByToken: {
      summary: "Write a row token's row (no session)",
      description: "Writes the token's row: only the fields its view shows and that are writable.",
      returns: { rowId: 'the row' },
      example: { token: 'rt_0123456789abcdef', fieldValues: { '12': 'Ada' } },
      errors: ['TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'TOKEN_READONLY', 'RATE_LIMITED'],
    },
    updateTableValue: {
      summary: 'Write one cell',
      description:
        "One cell (`rowId`, `fieldId`, `value`); a rowId starting with `tmp` creates a row in the field's table. The socket's type 13 does the same.",
      returns: { newRows: 'only when a tmp row was created: [{tmpId, id}]' },
      example: { ...T, rowId: 5, fieldId: 12, value: 'Ada' },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'ENCRYPTED_FIELD_LOCKED', 'ENCRYPTION_PASSWORD_WRONG'],
    },
    updateView: {
      summary: 'Change a view (extension)',
      description:
        'Name, description, presentation, locked, order, filterGroup, card, calendar, hiddenFields of view `viewId`.',
      returns: { viewId: 'the view' },
      example: { ...T, viewId: 3, name: 'Open items' },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
  },
  socket: {
    13: {
      summary: 'Update table value',
      description:
        'updateTableValue over the socket (same rules): `obo_u` names the user acted for (a delegate only). No answer on success (members get type 8); an error frame on failure.',
      example: {
        type: 13,
        o_u: 'alice',
        sesskey: 'S',
        b_o: 'alice',
        b_c: 'team',
        rowId: 5,
        fieldId: 12,
        value: 'Ada',
      },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'ON_BEHALF_DENIED'],
    },
  },
})
