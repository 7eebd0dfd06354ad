import { Head, Link, router } from '@inertiajs/react'
import type { ReactNode } from 'react'
import {
  Card,
  ConfirmButton,
  DataTable,
  FormErrors,
  ServerList,
  formatDate,
  type PagedList,
} from '@console/components/ui'

interface Device {
  id: number
  userId: number
  user: string
  deviceType: string
  token: string
  active: boolean
  updatedAt: string | null
}
/** An active device no configured push service reaches, with why. */
interface Unsupported {
  deviceId: number
  userId: number
  user: string
  deviceType: string
  reason: string
}
interface Props {
  devices: PagedList<Device>
  unsupported: Unsupported[]
}

/** A cell's text that may wrap (table cells keep to one line by default). */
const Wrapped = ({ children }: { children: ReactNode }) => (
  <div style={{ whiteSpace: 'normal', wordBreak: 'break-word' }}>{children}</div>
)

/** What each updatePushId deviceType is, in plain words. */
const KIND: Record<string, string> = {
  gcm_rid: 'Android (FCM)',
  gcm_nk: 'Android group (FCM)',
  ios_dt: 'iPhone (APNs)',
  ios_dt_v2: 'iPhone (APNs)',
  bb_dt: 'BlackBerry',
  win_uri: 'Windows Phone',
  web_push: 'Web browser (Web Push)',
}

/** Push devices per user: deactivate one; the ones no push service reaches, with the reason. */
/** A device's number and kind (both lists). */
function deviceColumn<Row extends { deviceType: string }>(idOf: (row: Row) => number) {
  return {
    header: 'Device',
    cell: (device: Row) => (
      <>
        #{idOf(device)}
        <div className="muted small">{KIND[device.deviceType] ?? device.deviceType}</div>
      </>
    ),
  }
}

/** Whose device it is, linked to the user's page (both lists). */
const userColumn = {
  header: 'User',
  cell: (device: { userId: number; user: string }) => (
    <Wrapped>
      <Link href={`/admin/users/${device.userId}`}>{device.user}</Link>
    </Wrapped>
  ),
}

export default function Devices({ devices, unsupported }: Props) {
  const deactivate = (id: number) =>
    router.post(`/admin/gateways/devices/${id}/deactivate`, {}, { preserveScroll: true })
  return (
    <>
      <Head title="Push devices" />
      <h1>Push devices</h1>
      <p className="muted">
        Phones that receive a notification for each new message in their owner's books.
      </p>
      <FormErrors />
      <Card title={`Devices (${devices.total})`}>
        <ServerList
          list={devices}
          name="devices"
          placeholder="User code, e-mail or device type"
          rowKey={(device) => device.id}
          rowData={(device) => ({ 'data-device': device.id })}
          empty="No device matches."
          columns={[
            deviceColumn((device: Device) => device.id),
            userColumn,
            {
              header: 'Token',
              cell: (device) => <code>{device.token}</code>,
              className: 'hide-sm',
            },
            {
              header: 'Updated',
              cell: (device) => formatDate(device.updatedAt),
              className: 'hide-sm',
            },
            {
              header: 'State',
              cell: (device) =>
                device.active ? (
                  <div className="row">
                    <span className="tag">active</span>
                    <ConfirmButton
                      label="Deactivate"
                      question={`Stop notifications to device #${device.id}?`}
                      danger
                      onConfirm={() => deactivate(device.id)}
                    />
                  </div>
                ) : (
                  <span className="tag bad">off</span>
                ),
            },
          ]}
        />
      </Card>
      <Card title="Devices no push service reaches">
        <p className="muted small">
          Kept and updated like any other, but sent nothing until a service for them is set up.
        </p>
        <DataTable
          rows={unsupported}
          rowKey={(device) => device.deviceId}
          rowData={(device) => ({ 'data-unsupported': device.deviceId })}
          empty="None: every active device can be reached."
          columns={[
            deviceColumn((device: Unsupported) => device.deviceId),
            userColumn,
            { header: 'Why', cell: (device) => <Wrapped>{device.reason}</Wrapped> },
          ]}
        />
      </Card>
    </>
  )
}
