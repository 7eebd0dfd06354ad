import { definePlugin } from '#core/plugins/define_plugin'

/** Smart tables: fields, rows, views, filters, tabs (see README.md). */
export default definePlugin({
  id: 'tables',
  version: '0.1.0',
  description: 'Smart tables: fields, rows, views, filters, tabs',
  dependsOn: ['books'],
  operations: {
    addNewTableRowByViewToken: () => import('./operations/add_new_table_row_by_view_token.js'),
    computeTableOperation: () => import('./operations/compute_table_operation.js'),
    createField: () => import('./operations/create_field.js'),
    createOrUpdateTableRow: () => import('./operations/create_or_update_table_row.js'),
    createOrUpdateTableRows: () => import('./operations/create_or_update_table_rows.js'),
    createTab: () => import('./operations/create_tab.js'),
    createTable: () => import('./operations/create_table.js'),
    createTableToken: () => import('./operations/create_table_token.js'),
    createView: () => import('./operations/create_view.js'),
    deleteField: () => import('./operations/delete_field.js'),
    deleteTab: () => import('./operations/delete_tab.js'),
    deleteTable: () => import('./operations/delete_table.js'),
    deleteTableRow: () => import('./operations/delete_table_row.js'),
    deleteTableRows: () => import('./operations/delete_table_rows.js'),
    deleteTableValueComments: () => import('./operations/delete_table_value_comments.js'),
    deleteView: () => import('./operations/delete_view.js'),
    editTableValueComments: () => import('./operations/edit_table_value_comments.js'),
    getBookTables: () => import('./operations/get_book_tables.js'),
    getNamedTableValues: () => import('./operations/get_named_table_values.js'),
    getNewTableRowByViewToken: () => import('./operations/get_new_table_row_by_view_token.js'),
    getRowHistory: () => import('./operations/get_row_history.js'),
    getReferenceFieldValues: () => import('./operations/get_reference_field_values.js'),
    getTablePivotValues: () => import('./operations/get_table_pivot_values.js'),
    getTableRowByToken: () => import('./operations/get_table_row_by_token.js'),
    getTableRows: () => import('./operations/get_table_rows.js'),
    getTableValueComments: () => import('./operations/get_table_value_comments.js'),
    getTableValueSubset: () => import('./operations/get_table_value_subset.js'),
    getTableValues: () => import('./operations/get_table_values.js'),
    listTableRowsById: () => import('./operations/list_table_rows_by_id.js'),
    listTableTokens: () => import('./operations/list_table_tokens.js'),
    renderSmartTextField: () => import('./operations/render_smart_text_field.js'),
    rollBackBeforeChange: () => import('./operations/roll_back_before_change.js'),
    revokeTableToken: () => import('./operations/revoke_table_token.js'),
    updateField: () => import('./operations/update_field.js'),
    updateTab: () => import('./operations/update_tab.js'),
    updateTable: () => import('./operations/update_table.js'),
    updateTableRowByToken: () => import('./operations/update_table_row_by_token.js'),
    updateTableValue: () => import('./operations/update_table_value.js'),
    updateView: () => import('./operations/update_view.js'),
  },
  // Link captions, lookups and rollups of other tables, recomputed after a write commits.
  jobs: {
    'tables.recompute': () => import('./jobs/recompute.js'),
  },
  // Socket update table value (type 13) and book updates ready on row writes (docs/socket.md).
  socket: {
    13: () => import('./socket/update_table_value.js'),
  },
  // Descriptions and examples for the API reference and MCP tools (docs/api-reference.md).
  reference: () => import('./reference.js'),
  realtime: () => import('./socket/realtime.js'),
  provider: () => import('./provider.js'),
  // Console pages (/admin/tables): admin/routes.ts, admin/pages/*.tsx.
  admin: {
    nav: [{ label: 'Tables' }],
    routes: () => import('./admin/routes.js'),
    dashboard: () => import('./admin/dashboard.js'),
    liveEvents: ['tables:rows_changed'],
  },
  settings: [
    {
      key: 'textIndex',
      label: 'Text index for new text fields',
      help:
        'Whether a new plain text field gets a substring index (faster contains, begins-with ' +
        'and ends-with filters and reference searches). On MariaDB an index takes about 75 ' +
        'bytes per indexed character and slows writes of its field by about a third. Turning ' +
        'this off leaves existing indexes in place.',
      type: 'boolean',
      default: true,
      env: 'TABLES_TEXT_INDEX',
      runtime: true,
    },
    {
      key: 'countersMinRows',
      label: 'Counts kept by triggers from',
      help:
        'A saved view whose count, or a table whose page offset, reaches this many rows gets ' +
        'counts kept by triggers (README, "Counts kept by triggers"): its count and its deep ' +
        'pages then read a few thousand small rows instead of every row they pass, at the cost ' +
        'of a trigger on each write of that table. 0 turns it off (existing counters stay until ' +
        'their view or table changes).',
      type: 'integer',
      default: 50_000,
      min: 0,
      max: 1_000_000_000,
      env: 'TABLES_COUNTERS_MIN_ROWS',
      runtime: true,
    },
  ],
})
