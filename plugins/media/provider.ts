import type { ApplicationService } from '@adonisjs/core/types'
import { bindSingletons } from '#core/container/bind_singletons'
import { localFiles } from '#core/transfer/local_files'
import '#plugins/books/events'
import '#plugins/tables/events'
import { DerivativeService } from './services/derivative_service.js'
import { MediaLifecycle } from './services/media_lifecycle.js'
import { MediaFiles } from './services/media_files.js'
import { MediaNames } from './services/media_names.js'
import { MediaService } from './services/media_service.js'
import { MediaStore } from './services/media_store.js'
import { ProfileService } from './services/profile_service.js'
import { TusUploads } from './services/tus_uploads.js'
import { UploadChecks } from './services/upload_checks.js'

/** How often each serving instance removes expired resumable uploads. */
const SWEEP_MS = 15 * 60_000

/** The media services, container singletons bound by class. */
export default class MediaProvider {
  private sweeper: NodeJS.Timeout | null = null

  constructor(protected app: ApplicationService) {}

  register() {
    bindSingletons(this.app.container, [
      MediaStore,
      DerivativeService,
      MediaFiles,
      MediaNames,
      UploadChecks,
      MediaService,
      ProfileService,
      MediaLifecycle,
      TusUploads,
    ])
  }

  /**
   * Files follow what holds them (MediaLifecycle): deleted messages, rows and
   * books, files taken out of cells, copied messages. The listeners run after
   * the write committed; a failure is logged, never undoes the write.
   */
  async boot() {
    // The book export (node ace export) reads files of this server through the kernel.
    localFiles.provide(async (name) => {
      const files = await this.app.container.make(MediaFiles)
      const found = await files.liveByName(name)
      if (!found) return null
      const store = await this.app.container.make(MediaStore)
      return store.bytes(found.storage_key)
    })
    const emitter = await this.app.container.make('emitter')
    const logger = await this.app.container.make('logger')
    const lifecycle = () => this.app.container.make(MediaLifecycle)
    const guarded =
      <T>(what: string, run: (service: MediaLifecycle, event: T) => Promise<unknown>) =>
      async (event: T) => {
        try {
          await run(await lifecycle(), event)
        } catch (error) {
          logger.error({ err: error }, `media: ${what} failed`)
        }
      }
    emitter.on(
      'books:message_created',
      guarded("copying a message's files", (service, event) => service.onMessageCreated(event))
    )
    emitter.on(
      'books:message_deleted',
      guarded("retiring a deleted message's files", (service, event) =>
        service.onMessageDeleted(event)
      )
    )
    emitter.on(
      'books:book_updated',
      guarded("retiring a deleted book's files", (service, event) => service.onBookUpdated(event))
    )
    emitter.on(
      'tables:fields_deleted',
      guarded('retiring files of deleted fields and tables', (service, event) =>
        service.onFieldsDeleted(event)
      )
    )
    emitter.on(
      'tables:rows_changed',
      guarded('retiring files of rows and cells', (service, event) => service.onRowsChanged(event))
    )
  }

  /**
   * Expired resumable uploads are removed by every serving instance on a
   * timer (removals are idempotent, so instances sharing MEDIA_TUS_DIR may
   * sweep at the same time), and once at start.
   */
  async ready() {
    if (!['web', 'test'].includes(this.app.getEnvironment())) return
    const uploads = await this.app.container.make(TusUploads)
    const logger = await this.app.container.make('logger')
    const sweep = () =>
      void uploads.removeExpired().catch((error) => {
        logger.warn({ err: error }, 'media: removing expired resumable uploads failed')
      })
    sweep()
    this.sweeper = setInterval(sweep, SWEEP_MS).unref()
  }

  async shutdown() {
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = null
  }
}
