import { createHash } from 'node:crypto'
import type { SourceRow, TransferSource } from '#core/transfer/transfer_source'

/**
 * A book as read through a transfer source (a server's interface or an archive), with every id
 * replaced by what it names (field names, the row a link points to, a file's bytes digest), so
 * a book and its copy on another server compare field by field with deepEqual.
 */
export async function snapshotOf(source: TransferSource, b_o: string, b_c: string) {
  const books = await source.books()
  const book = books.find((candidate) => candidate.b_o === b_o && candidate.b_c === b_c)
  if (!book) throw new Error(`${b_o}/${b_c} is not in ${source.label}`)
  const digest = async (file: Record<string, any>, ref: Record<string, any>) => {
    const bytes = await source.download({ b_o, b_c, type: 'doc', ...ref })
    return {
      name: file.originName ?? file.name,
      ext: file.ext,
      type: file.type,
      size: Number(file.size),
      sha: bytes ? createHash('sha256').update(bytes).digest('hex') : null,
    }
  }

  const { messages } = await source.messages(book)
  const messageSnapshots = []
  for (const message of messages.filter((candidate) => !candidate.del)) {
    const medias = []
    for (const media of message.medias ?? []) {
      medias.push(
        await digest(media, {
          id: media.id,
          type: media.type,
          uuid: media.uuid,
          internName: media.internName,
        })
      )
    }
    const event = message.event ? { ...message.event } : null
    if (event) delete event.eventParticipants
    messageSnapshots.push({
      msg: message.msg,
      msgBody: message.msgBody,
      msgBodyHTML: message.msgBodyHTML,
      msgType: message.msgType,
      msgColor: message.msgColor,
      event,
      medias,
    })
  }

  const tables = await source.tables(book)
  const categories = [...(tables?.categories ?? [])].sort((a, b) => a.order - b.order)
  const fieldNames = new Map<number, string>()
  const captions = new Map<number, string>()
  const rowsOf = new Map<number, SourceRow[]>()
  for (const category of categories) {
    for (const field of category.fields ?? [])
      fieldNames.set(field.id, `${category.name}.${field.name}`)
    const rows = []
    for await (const page of source.rows(book, category.id)) rows.push(...page)
    rowsOf.set(category.id, rows)
    const first = [...(category.fields ?? [])].sort((a, b) => a.order - b.order)[0]
    for (const row of rows) captions.set(row.id, String(first ? row.values[first.id] : row.id))
  }
  const tableSnapshots = []
  for (const category of categories) {
    const fields = [...(category.fields ?? [])].sort((a, b) => a.order - b.order)
    const rows = []
    for (const row of rowsOf.get(category.id) ?? []) {
      const cells: Record<string, unknown> = {}
      for (const field of fields) {
        const value = row.values[field.id]
        if (field.type === 'link') {
          cells[field.name] = (Array.isArray(value) ? value : []).map((id) =>
            captions.get(Number(id))
          )
        } else if (field.type === 'files') {
          const list = Array.isArray(value) ? value : []
          cells[field.name] = await Promise.all(
            list.map((entry) =>
              digest(entry, { type: entry.type, uuid: entry.uuid, internName: entry.internName })
            )
          )
        } else if (field.type === 'comments') {
          const thread = value ? await source.comments(book, field.id, row.id) : null
          cells[field.name] = thread ? thread.map((comment) => comment.m) : null
        } else {
          cells[field.name] = value
        }
      }
      rows.push(cells)
    }
    tableSnapshots.push({
      name: category.name,
      description: category.description,
      code: category.code,
      fields: fields.map((field) => ({
        name: field.name,
        type: field.type,
        code: field.code,
        description: field.description,
        readOnly: field.readOnly,
        values: field.values,
        enumColors: field.enumColors,
        dateFormat: field.dateFormat,
        numformat: field.numformat,
        multiple: field.multiple,
        linkCatId: field.linkCatId
          ? categories.find((c) => c.id === field.linkCatId)?.name
          : undefined,
      })),
      views: (category.views ?? []).map((view: Record<string, any>) => ({
        name: view.name,
        presentation: view.presentation,
        locked: view.locked,
        filters: (view.filterGroup?.filters ?? []).map((filter: Record<string, any>) => ({
          field: fieldNames.get(filter.field_id),
          type: filter.filter_type,
          json: filter.json,
        })),
      })),
      rows,
    })
  }
  return {
    title: book.title,
    description: book.description,
    messages: messageSnapshots,
    tables: tableSnapshots,
  }
}
