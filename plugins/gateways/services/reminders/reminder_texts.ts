const SMS_LENGTH = 300
const PUSH_LENGTH = 200

const cut = (text: string, length: number) =>
  text.length > length ? `${text.slice(0, length - 1)}…` : text

/** The event's start as people read it, in the event's own time zone (`Thu, 26 Nov 2026, 14:30 CET`). */
function startText(eventStart: number, timezone: string) {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(new Date(eventStart * 1000))
}

/** What a reminder says, per channel. */
export function reminderTexts(event: {
  title: string
  msg: string
  eventStart: number
  timezone: string
}) {
  const what = event.msg.split(/\r?\n/, 1)[0].trim() || '(no title)'
  const when = startText(event.eventStart, event.timezone)
  return {
    subject: `Reminder: ${cut(what, 80)}, ${when}`,
    mail: [
      `Reminder of an event of the book ${event.title}:`,
      '',
      event.msg,
      '',
      `Starts: ${when}`,
    ].join('\n'),
    sms: cut(`Reminder (${event.title}): ${what}, ${when}`, SMS_LENGTH),
    push: cut(`${what}, ${when}`, PUSH_LENGTH),
  }
}
