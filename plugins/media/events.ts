/**
 * Events of the media plugin, emitted after the write commits.
 */
export interface MediaFilesRetired {
  /** uuids and internal names of files just marked deleted. */
  names: string[]
}

declare module '@adonisjs/core/types' {
  interface EventsList {
    'media:files_retired': MediaFilesRetired
  }
}
