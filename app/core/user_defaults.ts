/**
 * The defaults a user's stored rights and colours override. A module of their own because both
 * UserService (which serializes userInfo) and the userInfo serializer need them: kept in the
 * service, they made the two modules import each other.
 */

/** Right names a user holds (getUserInfo `rights`); stored values override these defaults. */
export const DEFAULT_RIGHTS: Record<string, boolean> = {
  useApi: true,
  createBooks: true,
  createTables: true,
  inviteMembers: true,
  admin: false,
}

/** The palette of the spec's colour names. */
export const DEFAULT_COLORS: Record<string, string> = {
  'defaut': '#4a90d9',
  'bleu-violet': '#6f5bd3',
  'gray': '#8e8e93',
  'bleu-turquoise': '#2bb3c0',
  'red': '#e74c3c',
  'green': '#27ae60',
  'orange': '#f39c12',
  'pink': '#e86fa6',
  'bleu-nuit': '#2c3e70',
  'noir': '#222222',
  'rose-bois': '#b5838d',
  'orange-pastel': '#f8b878',
  'vert-pastel': '#a8d5a2',
  'jaune-indien': '#e3a857',
  'lilas': '#c8a2c8',
}
