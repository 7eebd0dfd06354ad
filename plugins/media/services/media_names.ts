import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import mediaConfig from '../config.js'
import { MediaFiles, type MediaFile } from './media_files.js'

/**
 * Files found by name (uuid or internal name) for the /dbi URLs and covers:
 * cached a few seconds, concurrent lookups of one name sharing one query, and
 * forgotten at once when a file is retired (here, or on another instance
 * through the hub's media:retired signal).
 */
@inject()
export class MediaNames {
  /** uuid/internName -> row: a cached /dbi/in request reads no database. */
  private cache = new Map<string, { row: MediaFile; at: number }>()
  /** Lookups by name under way (see byName). */
  private lookups = new Map<string, Promise<MediaFile | null>>()

  constructor(
    private files: MediaFiles,
    private bookAccess: BookAccessService
  ) {}

  /** Drops names from the lookup cache (files just marked deleted). */
  forget(names: string[]) {
    for (const name of names) {
      this.cache.delete(name)
      this.lookups.delete(name)
    }
  }

  /**
   * A live file by uuid or internal name, cached a few seconds (covers and
   * thumbnails are fetched often). Concurrent lookups of one name share one
   * query: when an entry expires under load, the requests arriving together
   * do not each ask the database.
   */
  async byName(name: string): Promise<MediaFile | null> {
    if (!/^[\w.-]{8,80}$/.test(name)) return null
    const cached = this.cache.get(name)
    if (cached && Date.now() - cached.at < mediaConfig.nameCacheMs) return cached.row
    let lookup = this.lookups.get(name)
    if (!lookup) {
      const started: Promise<MediaFile | null> = this.files
        .liveByName(name)
        .then((row) => {
          // Cached only when not forgotten meanwhile (a deletion during the query).
          if (row && this.lookups.get(name) === started) {
            if (this.cache.size > 10_000) this.cache.clear()
            this.cache.set(name, { row, at: Date.now() })
          }
          return row
        })
        .finally(() => {
          if (this.lookups.get(name) === started) this.lookups.delete(name)
        })
      lookup = started
      this.lookups.set(name, lookup)
    }
    return lookup
  }

  /** Whether the actor may see a file found by name through a session-bound form (oin). */
  async visibleTo(actor: Actor, file: MediaFile) {
    if (file.owner_id === actor.user.id) return true
    if (file.book_id === null) return false
    const book = await this.bookAccess.findById(file.book_id)
    if (!book || !this.bookAccess.allows(actor, book)) return false
    return (await this.bookAccess.rightOf(actor.user.id, book.id)) !== null
  }
}
