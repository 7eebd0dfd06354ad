import { Head, Link, useForm } from '@inertiajs/react'
import { useState, type FormEvent } from 'react'
import {
  Card,
  FieldError,
  FormErrors,
  ServerList,
  formatDate,
  type PagedList,
} from '../../components/ui'

interface UserRow {
  id: number
  code: string
  email: string | null
  phone: string | null
  firstName: string
  lastName: string
  isAdmin: boolean
  disabled: boolean
  lastConnectionAt: string | null
}

interface Props {
  users: PagedList<UserRow>
}

function CreateUser() {
  const form = useForm({
    code: '',
    email: '',
    phone: '',
    firstName: '',
    lastName: '',
    password: '',
    isAdmin: false,
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    form.transform((data) =>
      Object.fromEntries(Object.entries(data).filter(([, value]) => value !== ''))
    )
    form.post('/admin/users')
  }
  const text = (
    name: 'code' | 'email' | 'phone' | 'firstName' | 'lastName' | 'password',
    label: string,
    type = 'text'
  ) => (
    <label>
      {label}
      <input
        name={name}
        type={type}
        value={form.data[name]}
        onChange={(event) => form.setData(name, event.target.value)}
        required={name === 'code' || name === 'password'}
      />
      <FieldError name={name} />
    </label>
  )
  return (
    <form onSubmit={submit} className="form-grid" aria-label="New user">
      <FormErrors />
      {text('code', 'User code')}
      {text('email', 'E-mail', 'email')}
      {text('phone', 'Phone')}
      {text('firstName', 'First name')}
      {text('lastName', 'Last name')}
      {text('password', 'Password', 'password')}
      <label className="check">
        <input
          type="checkbox"
          name="isAdmin"
          checked={form.data.isAdmin}
          onChange={(event) => form.setData('isAdmin', event.target.checked)}
        />
        Administrator
      </label>
      <button type="submit" className="primary" disabled={form.processing}>
        Create user
      </button>
    </form>
  )
}

/** Users, searched and paged on the server; a new user's form. */
export default function UsersIndex({ users }: Props) {
  const [creating, setCreating] = useState(false)
  return (
    <>
      <Head title="Users" />
      <h1>Users</h1>
      <Card
        actions={
          <button type="button" onClick={() => setCreating(!creating)}>
            {creating ? 'Close' : 'New user'}
          </button>
        }
      >
        {creating && <CreateUser />}
        <ServerList
          list={users}
          placeholder="Code, e-mail, phone or name"
          rowKey={(user) => user.id}
          empty="No user matches."
          columns={[
            {
              header: 'Code',
              cell: (user) => <Link href={`/admin/users/${user.id}`}>{user.code}</Link>,
            },
            { header: 'Name', cell: (user) => `${user.firstName} ${user.lastName}`.trim() },
            { header: 'E-mail', cell: (user) => user.email },
            { header: 'Phone', cell: (user) => user.phone, className: 'hide-sm' },
            {
              header: 'Last connection',
              cell: (user) => formatDate(user.lastConnectionAt),
              className: 'hide-sm',
            },
            {
              header: '',
              cell: (user) => (
                <>
                  {user.isAdmin && <span className="tag">admin</span>}
                  {user.disabled && <span className="tag bad">disabled</span>}
                </>
              ),
            },
          ]}
        />
      </Card>
    </>
  )
}
