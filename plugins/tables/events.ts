/**
 * Events of the tables plugin, emitted after commit. Webhooks and the
 * realtime socket consume `tables:rows_changed`; the media plugin both (files
 * of deleted rows, cells, fields and tables).
 */
export interface RowsChanged {
  bookId: number
  b_o: string
  b_c: string
  categoryId: number
  created: number[]
  modified: number[]
  deleted: number[]
  /** Fields the request wrote (computed fields that followed are not listed). */
  fieldIds: number[]
  /** The user the write acted as (u_c). */
  actorId: number
  /** The principal (o_u) when writing on behalf of another user, else null. */
  onBehalfOf: number | null
  stamp: number
  /** True unless the client sent bypassUrlTrigger=false (the live product's default for API calls). */
  bypassUrlTrigger: boolean
  /** 'token': made with a row or form token (then actorId is the token's creator). */
  source: 'api' | 'socket' | 'token'
  /** The table token that made the write (source 'token'), else absent. */
  tokenId?: number
}

/** A table or a field was deleted (deleteTable, deleteField), after commit: its cells are gone. */
export interface FieldsDeleted {
  categoryId: number
  /** Every field whose values went: the one field, or all the table's. */
  fieldIds: number[]
  /** True when the whole table went. */
  table: boolean
}

declare module '@adonisjs/core/types' {
  interface EventsList {
    'tables:fields_deleted': FieldsDeleted
    'tables:rows_changed': RowsChanged
  }
}

/** One field of a row write: its value before and after, as getTableValues answers them. */
export interface RowFieldChange {
  fieldId: number
  name: string
  old: unknown
  new: unknown
}

/**
 * `tables:rows_changed` as staged INSIDE the write's transaction (kernel
 * outbox topic, docs/outbox.md): the event plus, per row, the fields the
 * request wrote with old and new values (created rows: old null; deleted
 * rows: every field, new null). Staged only when a contributor wants it.
 */
export interface RowsChanging extends RowsChanged {
  catName: string
  changes: { id: number; fields: RowFieldChange[] }[]
  /**
   * Set when one stamp covers several changes of a row (group-committed
   * one-cell writes of the same row): 1, 2... for the second, third... so
   * each change is a delivery of its own.
   */
  seq?: number
}

declare module '#core/outbox/types' {
  interface OutboxTopics {
    'tables:rows_changed': RowsChanging
  }
}

/**
 * A new cell comment as staged INSIDE its transaction (kernel outbox topic,
 * docs/outbox.md): webhooks' `comment.created`. Staged only when a
 * contributor wants the table (`wants({categoryId})` first).
 */
export interface CommentCreating {
  bookId: number
  b_o: string
  b_c: string
  categoryId: number
  catName: string
  fieldId: number
  fieldName: string
  rowId: number
  commentId: number
  text: string
  action: unknown[] | null
  actorId: number
  onBehalfOf: number | null
  stamp: number
}

declare module '#core/outbox/types' {
  interface OutboxTopics {
    'tables:comment_created': CommentCreating
  }
}
