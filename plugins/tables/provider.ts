import type { ApplicationService } from '@adonisjs/core/types'
import { bindSingletons } from '#core/container/bind_singletons'
import { CellFilesService } from './services/cell_files_service.js'
import { CellWriter } from './services/cell_writer.js'
import { CommentsService } from './services/comments_service.js'
import { HistoryService } from './services/history_service.js'
import { ComputedFields } from './services/computed_fields.js'
import { MetaService } from './services/meta_service.js'
import { PivotService } from './services/pivot_service.js'
import { RecomputeService } from './services/recompute_service.js'
import { RollbackService } from './services/rollback_service.js'
import { ReferenceValuesService } from './services/reference_values_service.js'
import { RowDeletes } from './services/row_deletes.js'
import { RowWriter } from './services/row_writer.js'
import { RowsService } from './services/rows_service.js'
import { SchemaService } from './services/schema_service.js'
import { SmartTextService } from './services/smart_text_service.js'
import { StructureService } from './services/structure_service.js'
import { FieldEncryption } from './services/field_encryption.js'
import { FieldStructure } from './services/field_structure.js'
import { ViewStructure } from './services/view_structure.js'
import { TabStructure } from './services/tab_structure.js'
import { TableAccess } from './services/table_access.js'
import { TableTokensService } from './services/table_tokens_service.js'
import { ValuesService } from './services/values_service.js'
import { RowSelection } from './services/row_selection.js'
import { BookTablesService } from './services/book_tables_service.js'

/**
 * The tables plugin's services, bound by class as container singletons
 * (each built once, from its @inject() constructor): operations, the socket
 * handler and the recompute job receive them by type. They hold state that
 * must be one per process: the metadata cache, the access cache, the
 * group-commit queue of cell writes, the next expected row ids.
 */
export default class TablesProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    bindSingletons(this.app.container, [
      MetaService,
      SchemaService,
      TableAccess,
      CommentsService,
      HistoryService,
      RollbackService,
      ComputedFields,
      FieldEncryption,
      RecomputeService,
      CellWriter,
      RowWriter,
      RowDeletes,
      RowsService,
      RowSelection,
      BookTablesService,
      ValuesService,
      CellFilesService,
      FieldStructure,
      StructureService,
      ViewStructure,
      TabStructure,
      PivotService,
      ReferenceValuesService,
      SmartTextService,
      TableTokensService,
    ])
  }

  /** The console's table grids follow row writes live (admin/grid_feed.ts), where requests are served. */
  async start() {
    const { GridFeed } = await import('./admin/grid_feed.js')
    await GridFeed.start(this.app)
  }

  /** Serving processes prune the cell history past its retention (README, "Cell history"). */
  async ready() {
    if (!['web', 'test'].includes(this.app.getEnvironment())) return
    const history = await this.app.container.make(HistoryService)
    history.startPruner()
  }
}
