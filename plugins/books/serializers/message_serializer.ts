import type { EventRow, MediaEntry, MessageRow } from '../models/records.js'
import { parseJson } from '../models/prefs.js'
import { serializeEventFields } from './event_serializer.js'

const int = (value: unknown) => {
  const number = Number(value ?? 0)
  return Number.isFinite(number) ? Math.trunc(number) : 0
}

/** One media of a message (2.5), every field with its wire type. */
export function serializeMedia(media: Partial<MediaEntry>) {
  return {
    id: int(media.id),
    ext: String(media.ext ?? ''),
    originName: String(media.originName ?? ''),
    internName: String(media.internName ?? ''),
    uuid: String(media.uuid ?? ''),
    size: int(media.size),
    type: media.type === 'doc' ? 'doc' : 'media',
    emailCid: String(media.emailCid ?? ''),
    del: Boolean(media.del),
  }
}

export interface MessageContext {
  /** Creator's user code. */
  u_c: string
  /** The event of the message, when it carries one. */
  event?: { row: EventRow; participants: { id: number; u_c: string }[] } | null
}

/**
 * A message as getBookMessages answers it (2.5). A deleted message keeps its
 * identity (smid, uuid, stamps, del true) but not its content.
 */
export function serializeMessage(row: MessageRow, context: MessageContext) {
  const deleted = Boolean(row.del)
  const medias = deleted ? [] : parseJson<Partial<MediaEntry>[]>(row.medias, [])
  const wire: Record<string, unknown> = {
    smid: int(row.smid),
    uuid: row.uuid,
    u_c: context.u_c,
    created: int(row.created),
    lastModified: int(row.last_modified),
    sstamp: int(row.sstamp),
    del: deleted,
    pid: int(row.pid),
    msg: deleted ? '' : row.msg,
    msgBody: deleted ? '' : (row.msg_body ?? ''),
    msgBodyHTML: deleted ? '' : (row.msg_body_html ?? ''),
    msgType: row.msg_type,
    msgMethod: row.msg_method,
    msgColor: row.msg_color,
    nbComments: int(row.nb_comments),
    lastCommentId: int(row.last_comment_id),
    nbMedias: int(row.nb_medias),
    nbEmailCids: int(row.nb_email_cids),
    nbDocs: int(row.nb_docs),
    medias: Array.isArray(medias) ? medias.map(serializeMedia) : [],
  }
  if (!deleted && context.event)
    wire.event = serializeEventFields(context.event.row, context.event.participants)
  return wire
}

/**
 * A book's lastMsg (2.4): the message plus b_c and b_o, with the HTML body
 * spelled msgBodyHtml. E-mail bodies are not sent here (version 2.15,
 * docs/spec/service-interface.md part 9): both are empty.
 */
export function serializeLastMessage(
  row: MessageRow,
  context: { u_c: string; b_o: string; b_c: string }
) {
  const wire = serializeMessage(row, { u_c: context.u_c })
  delete wire.msgBodyHTML
  return { ...wire, msgBody: '', msgBodyHtml: '', b_c: context.b_c, b_o: context.b_o }
}
