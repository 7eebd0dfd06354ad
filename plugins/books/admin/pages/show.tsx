import { Head, Link, router, useForm } from '@inertiajs/react'
import type { FormEvent } from 'react'
import {
  Card,
  ConfirmButton,
  FieldError,
  FormErrors,
  Pager,
  SearchBox,
  ServerList,
  formatDate,
  type PagedList,
} from '@console/components/ui'

interface Props {
  book: {
    id: number
    code: string
    owner: string
    title: string
    description: string
    archived: boolean
    createdAt: string | null
  }
  /** Paged on the server: membersPage / membersSearch. */
  members: PagedList<{
    userId: number
    code: string
    email: string | null
    right: number
    invite: string
  }>
  /** The rights in plain words by value (plugins/books/rights.ts, RIGHT_LABELS). */
  rights: Record<string, string>
  /** Paged and searched on the server, newest first. */
  messages: {
    items: { smid: number; u_c: string; msg: string; created: number; type: string | null }[]
    total: number
    page: number
    perPage: number
    search: string
  }
}

const when = (created: number) => formatDate(created > 1e12 ? created : created * 1000)

/** One book: members and rights, invitation, archive, delete, and a message browser. */
export default function BookShow({ book, members, rights, messages }: Props) {
  const base = `/admin/books/${book.id}`
  const invite = useForm({ login: '', right: 2 })
  const post = (path: string, data: Record<string, unknown> = {}) =>
    router.post(`${base}${path}`, data as any, { preserveScroll: true })
  const submitInvite = (event: FormEvent) => {
    event.preventDefault()
    invite.post(`${base}/invite`, { preserveScroll: true, onSuccess: () => invite.reset('login') })
  }
  const rightOptions = Object.entries(rights).map(([value, label]) => (
    <option key={value} value={value}>
      {label}
    </option>
  ))
  return (
    <>
      <Head title={book.code} />
      <p className="muted">
        <Link href="/admin/books">Books</Link> ›
      </p>
      <h1>
        {book.title}{' '}
        <span className="muted small">
          ({book.owner} / {book.code})
        </span>{' '}
        {book.archived && <span className="tag">archived</span>}
      </h1>
      <FormErrors />
      <div className="row">
        <button type="button" onClick={() => post('/archive', { archived: !book.archived })}>
          {book.archived ? 'Unarchive' : 'Archive'}
        </button>
        <ConfirmButton
          label="Delete book"
          question={`Delete ${book.code} for every member?`}
          danger
          onConfirm={() => post('/delete')}
        />
      </div>
      <div className="grid2">
        <Card title={`Members (${members.total})`}>
          <ServerList
            list={members}
            name="members"
            placeholder="Member code or e-mail"
            rowKey={(member) => member.userId}
            rowData={(member) => ({ 'data-member': member.code })}
            empty="No member matches."
            columns={[
              {
                header: 'Member',
                cell: (member) => (
                  <>
                    <Link href={`/admin/users/${member.userId}`}>{member.code}</Link>
                    {member.invite === 'sent' && <span className="tag">invited</span>}
                  </>
                ),
              },
              {
                header: 'Right',
                // The owner's right is fixed (the owner always administers the book).
                cell: (member) =>
                  member.code === book.owner ? (
                    <span data-right="owner">Owner</span>
                  ) : (
                    <select
                      aria-label={`Right of ${member.code}`}
                      value={member.right}
                      onChange={(event) =>
                        post(`/members/${member.userId}/right`, {
                          right: Number(event.target.value),
                        })
                      }
                    >
                      {rightOptions}
                    </select>
                  ),
              },
              {
                header: <span className="sr-only">Remove</span>,
                cell: (member) =>
                  member.code !== book.owner && (
                    <ConfirmButton
                      label="Remove"
                      question={`Remove ${member.code}?`}
                      danger
                      onConfirm={() => post(`/members/${member.userId}/remove`)}
                    />
                  ),
              },
            ]}
          />
          <form className="inline" onSubmit={submitInvite} aria-label="Invite">
            <label>
              Invite (code, e-mail or phone)
              <input
                name="login"
                value={invite.data.login}
                onChange={(event) => invite.setData('login', event.target.value)}
                required
              />
              <FieldError name="login" />
            </label>
            <label>
              Right
              <select
                name="right"
                value={invite.data.right}
                onChange={(event) => invite.setData('right', Number(event.target.value))}
              >
                {rightOptions}
              </select>
            </label>
            <button type="submit">Invite</button>
          </form>
        </Card>
        <Card title="About">
          <p>{book.description || <span className="muted">No description.</span>}</p>
          <p className="muted small">Created {formatDate(book.createdAt)}</p>
        </Card>
      </div>
      <Card title="Messages">
        <SearchBox only={['messages']} value={messages.search} placeholder="Search messages" />
        <ul className="activity">
          {messages.items.map((message) => (
            <li key={message.smid}>
              <span className="muted">
                #{message.smid} {when(message.created)}
              </span>{' '}
              <strong>{message.u_c}</strong>: {message.msg}
            </li>
          ))}
          {messages.items.length === 0 && <li className="muted">No message.</li>}
        </ul>
        <Pager {...messages} only={['messages']} />
      </Card>
    </>
  )
}
