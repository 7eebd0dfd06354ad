/**
 * Events of the tables plugin, emitted after commit. Webhooks and the
 * realtime socket consume `tables:rows_changed`.
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
  source: 'api' | 'socket'
}

declare module '@adonisjs/core/types' {
  interface EventsList {
    'tables:rows_changed': RowsChanged
  }
}
