/**
 * Member rights of a book (the `right` integer of members; see README.md).
 * The scale is ordinal: each level includes everything below it.
 */
export const RIGHT_READ = 1
/** Read, send messages, edit and delete one's own messages and events. */
export const RIGHT_READWRITE = 2
/** RIGHT_READWRITE + delete or move anyone's messages and events. */
export const RIGHT_READWRITEDELETE = 3
/** Administer the book: title, cover, members and their rights, archive. The owner always holds it. */
export const RIGHT_ADMIN = 4
/** The owner's right: the same value as RIGHT_ADMIN (the owner is the first administrator). */
export const RIGHT_OWNER = RIGHT_ADMIN

export const RIGHT_NAMES: Record<number, string> = {
  [RIGHT_READ]: 'RIGHT_READ',
  [RIGHT_READWRITE]: 'RIGHT_READWRITE',
  [RIGHT_READWRITEDELETE]: 'RIGHT_READWRITEDELETE',
  [RIGHT_ADMIN]: 'RIGHT_ADMIN',
}

/**
 * The rights in plain words, as people read them (the console's menus and lists). The one map:
 * pages take it from the server rather than keep their own copy.
 */
export const RIGHT_LABELS: Record<number, string> = {
  [RIGHT_READ]: 'Read',
  [RIGHT_READWRITE]: 'Read and write',
  [RIGHT_READWRITEDELETE]: "Read, write and delete anyone's",
  [RIGHT_ADMIN]: 'Administer',
}

export type BookNeed = 'read' | 'write' | 'delete' | 'admin'

/** The lowest right that satisfies a need. */
export const NEED_RIGHT: Record<BookNeed, number> = {
  read: RIGHT_READ,
  write: RIGHT_READWRITE,
  delete: RIGHT_READWRITEDELETE,
  admin: RIGHT_ADMIN,
}

export const isValidRight = (value: number) =>
  Number.isInteger(value) && value >= RIGHT_READ && value <= RIGHT_ADMIN
