import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import quireConfig from '#config/quire'
import { AddressInvitationService } from '../services/address_invitation_service.js'

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

const page = (title: string, body: string) =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title></head>
<body><main>${body}</main></body></html>
`

/**
 * GET /invite/:token, the link of an invitation to an address with no
 * account (inviteMember): which book, who invited, and how to get an
 * account (signing up in the app with the invited address when the server
 * allows createUserAccount, else asking its administrator). No session; an
 * unknown or expired token is a 404 page. Never cached, never referred
 * (the token is in the URL).
 */
@inject()
export default class InvitationPageController {
  constructor(private invitations: AddressInvitationService) {}

  async show({ params, response }: HttpContext) {
    response.header('cache-control', 'no-store')
    response.header('content-type', 'text/html; charset=utf-8')
    const invitation = await this.invitations.page(String(params.token ?? ''))
    if (!invitation)
      return response
        .status(404)
        .send(
          page(
            'Invitation not found',
            '<h1>Invitation not found</h1><p>This invitation link is unknown or has expired. Ask the person who invited you to invite you again.</p>'
          )
        )
    const address = invitation.kind === 'email' ? 'e-mail address' : 'phone number'
    const howTo = quireConfig.createUserAccount
      ? `<p>To join, create an account in the Quire app with the ${address} this invitation was sent to: the book will be waiting for you.</p>`
      : `<p>This server does not create accounts by itself: ask its administrator for an account with the ${address} this invitation was sent to, and the book will be waiting for you.</p>`
    const title = escapeHtml(invitation.title)
    return response.send(
      page(
        `Invitation to ${invitation.title}`,
        `<h1>You are invited to the book ${title}</h1>
<p>${escapeHtml(invitation.inviter)} invites you to the book <strong>${title}</strong>.</p>
${howTo}`
      )
    )
  }
}
