import { useEffect, useRef } from 'react'
import { formatDate } from '@console/components/ui'
import type { RowPanelData } from './types'

/**
 * One row in a side panel: every cell in full, its comments (per comment field, oldest first)
 * and its last changes (the cell history, newest first). The heading takes the focus when
 * the panel opens; Close (or Escape) gives it back to the row.
 */
export function RowPanel(props: { id: string; panel: RowPanelData; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null)
  const { panel } = props
  useEffect(() => heading.current?.focus(), [panel.id])
  const title = `Row ${panel.number ?? ''}`.trim()
  return (
    <aside
      id={props.id}
      className="row-panel"
      aria-labelledby={`${props.id}-title`}
      data-panel-row={panel.id}
      onKeyDown={(event) => {
        if (event.key === 'Escape') props.onClose()
      }}
    >
      <header>
        <h2 id={`${props.id}-title`} ref={heading} tabIndex={-1}>
          {title}
        </h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </header>
      {panel.missing ? (
        <p className="muted">This row no longer exists.</p>
      ) : (
        <>
          <dl className="kv-list">
            {panel.cells!.map((cell) => (
              <div className="kv" key={cell.name}>
                <dt className="muted">{cell.name}</dt>
                <dd>{cell.text || '—'}</dd>
              </div>
            ))}
          </dl>
          <section aria-labelledby={`${props.id}-comments`}>
            <h3 id={`${props.id}-comments`}>Comments</h3>
            {panel.comments!.length === 0 && <p className="muted small">No comment.</p>}
            {panel.comments!.map((thread) => (
              <div key={thread.field} data-comments={thread.field}>
                <p className="small">{thread.field}</p>
                <ul className="activity">
                  {thread.comments.map((comment) => (
                    <li key={comment.id}>
                      <span className="muted">{formatDate(comment.at)}</span>{' '}
                      <strong>{comment.author}</strong> {comment.text}
                    </li>
                  ))}
                </ul>
              </div>
            ))}
          </section>
          <section aria-labelledby={`${props.id}-history`}>
            <h3 id={`${props.id}-history`}>Changes</h3>
            {panel.history!.total === 0 && <p className="muted small">No recorded change.</p>}
            <ul className="activity" data-history>
              {panel.history!.changes.map((change) => (
                <li key={change.id}>
                  <span className="muted">{formatDate(change.at)}</span> {change.text}{' '}
                  <span className="muted small">(from {change.via})</span>
                </li>
              ))}
            </ul>
            {panel.history!.total > panel.history!.changes.length && (
              <p className="muted small">
                The last {panel.history!.changes.length} of{' '}
                {panel.history!.total.toLocaleString('en')} changes.
              </p>
            )}
          </section>
        </>
      )}
    </aside>
  )
}
