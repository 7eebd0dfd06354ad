import { Head, Link } from '@inertiajs/react'
import { Card } from '../components/ui'

interface Plugin {
  id: string
  version: string
  description: string
  dependsOn: string[]
  operations: string[]
  socketTypes: string[]
  systemMessages: string[]
  jobs: string[]
  routes: string[]
  consolePages: { label: string; href: string }[]
}

/** Names a plugin declares (operations, job names...): shown as code, the way a developer types them. */
const List = ({ label, items }: { label: string; items: string[] }) => (
  <div className="kv">
    <span className="muted">{label}</span>
    <span>
      {items.length
        ? items.map((item, index) => (
            <span key={item}>
              {index > 0 && ', '}
              <code>{item}</code>
            </span>
          ))
        : '—'}
    </span>
  </div>
)

/** What the plugin:list command shows, plus each plugin's console pages. */
export default function Plugins({ plugins }: { plugins: Plugin[] }) {
  return (
    <>
      <Head title="Plugins" />
      <h1>Plugins</h1>
      <p className="muted">Enabled in config/plugins.ts, in load order.</p>
      {plugins.map((plugin) => (
        <Card key={plugin.id} title={`${plugin.id} ${plugin.version}`}>
          {plugin.description && <p>{plugin.description}</p>}
          <List label="depends on" items={plugin.dependsOn} />
          <List label="operations" items={plugin.operations} />
          <List label="socket types" items={plugin.socketTypes} />
          <List label="system messages" items={plugin.systemMessages} />
          <List label="jobs" items={plugin.jobs} />
          <List label="routes" items={plugin.routes} />
          <div className="kv">
            <span className="muted">console pages</span>
            <span>
              {plugin.consolePages.length
                ? plugin.consolePages.map((page) => (
                    <Link key={page.href} href={page.href}>
                      {page.label}{' '}
                    </Link>
                  ))
                : '—'}
            </span>
          </div>
        </Card>
      ))}
    </>
  )
}
