import { Link, router, usePage } from '@inertiajs/react'
import { useState, type ReactNode } from 'react'

export interface SharedProps {
  me: { code: string; name: string }
  nav: { label: string; href: string; source: string }[]
  notice: string | null
  errors?: Record<string, string>
  [key: string]: unknown
}

/** The signed-in shell: navigation built by the server from every plugin's manifest. */
export default function Layout({ children }: { children: ReactNode }) {
  const { props, url } = usePage<SharedProps>()
  const [open, setOpen] = useState(false)
  const current = (href: string) =>
    href === '/admin' ? url === '/admin' || url.startsWith('/admin?') : url.startsWith(href)
  return (
    <div className="shell">
      <header className="topbar">
        <button
          className="menu"
          aria-label="Menu"
          aria-controls="console-nav"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
        >
          ☰
        </button>
        <Link href="/admin" className="brand">
          Quire
        </Link>
        <span className="spacer" />
        <Link href="/admin/account" className="who" title={`${props.me?.name}: your account`}>
          {props.me?.code}
        </Link>
        <button className="link" onClick={() => router.post('/admin/logout')}>
          Sign out
        </button>
      </header>
      <nav id="console-nav" className={open ? 'side open' : 'side'} aria-label="Console">
        {(props.nav ?? []).map((entry) => (
          <Link
            key={entry.href}
            href={entry.href}
            className={current(entry.href) ? 'active' : ''}
            onClick={() => setOpen(false)}
          >
            {entry.label}
          </Link>
        ))}
      </nav>
      <main className="content">
        {props.notice && <p className="notice">{props.notice}</p>}
        {children}
      </main>
    </div>
  )
}
