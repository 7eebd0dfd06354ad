import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type User from '#models/user'
import { UserService } from '#core/services/user_service'
import { AccessService } from '#core/services/access_service'
import { ConsoleSecurity } from '#core/auth/console_security'
import { refusalAsFormError, validatedBody } from '#admin/forms'
import { listQuery } from '#admin/list_query'
import { passwordPolicy } from '#core/services/password_policy'
import { userActor } from '#core/audit/audit_log'
import { UserPanelsService } from '#admin/services/user_panels_service'

const PER_PAGE = 25
/** Delegations, sesskeys and the plugins' panels on a user's page. */
const SESSIONS_PER_PAGE = 20

const profile = {
  email: vine.string().trim().email().maxLength(191).optional(),
  phone: vine.string().trim().maxLength(32).optional(),
  firstName: vine.string().trim().maxLength(100).optional(),
  lastName: vine.string().trim().maxLength(100).optional(),
  isAdmin: vine.boolean().optional(),
}
const newUser = vine.compile(
  vine.object({
    code: vine
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._@+-]{1,100}$/),
    // The length rules are the password policy's (AUTH_PASSWORD_MIN_LENGTH), checked below.
    password: vine.string(),
    ...profile,
  })
)
const editUser = vine.compile(vine.object(profile))
const newPassword = vine.compile(vine.object({ password: vine.string() }))
const disable = vine.compile(vine.object({ disabled: vine.boolean() }))
const twoFactor = vine.compile(
  vine.object({ action: vine.enum(['require', 'optional', 'default', 'reset']) })
)
const delegation = vine.compile(
  vine.object({
    delegate: vine.string().trim().maxLength(191),
    action: vine.enum(['grant', 'revoke']),
    direction: vine.enum(['delegate', 'user']).optional(),
  })
)
const revoke = vine.compile(
  vine.object({ kind: vine.enum(['sesskey']), id: vine.string().trim().maxLength(64) })
)
const panelRow = vine.compile(vine.object({ id: vine.string().trim().maxLength(191) }))

/**
 * The console's Users pages. Every write goes through the service method the
 * rest of Quire uses (UserService, AccessService, and the
 * authentication provider's ConsoleSecurity); the page only asks and shows.
 */
@inject()
export default class UsersController {
  constructor(
    private users: UserService,
    private access: AccessService,
    private security: ConsoleSecurity,
    private panels: UserPanelsService
  ) {}

  /** The password policy's verdict as a form error on `password`; true when it was refused. */
  private refusedPassword(ctx: HttpContext, password: string) {
    const [problem] = passwordPolicy.problems(password)
    if (problem) ctx.session.flash('errorsBag', { password: problem })
    return Boolean(problem)
  }

  private summary(user: User) {
    return {
      id: user.id,
      code: user.code,
      email: user.email,
      phone: user.phone,
      firstName: user.firstName,
      lastName: user.lastName,
      isAdmin: user.isAdmin,
      disabled: Boolean(user.disabledAt),
      lastConnectionAt: user.lastConnectionAt?.toISO() ?? null,
      createdAt: user.createdAt?.toISO() ?? null,
    }
  }

  async index({ inertia, request }: HttpContext) {
    const users = await this.users.search(await listQuery(request.qs(), PER_PAGE))
    return inertia.render('users/index', {
      users: { ...users, items: users.items.map((user) => this.summary(user)) },
    })
  }

  private async find(ctx: HttpContext): Promise<User> {
    const id = Number(ctx.params.id)
    const user = Number.isSafeInteger(id) ? await this.users.findById(id) : null
    if (!user) ctx.response.abort('Not found', 404)
    return user!
  }

  /**
   * One user. Delegations, sesskeys and each plugin panel's rows are lists
   * with their own page and search each (delegationsPage, sesskeysSearch...):
   * props are functions, so a partial reload of one list reads only that one.
   * Panels (manifest `admin.userPanels`) come as descriptions, `panels`, and
   * one prop of rows per panel, named by its key.
   */
  async show(ctx: HttpContext) {
    const user = await this.find(ctx)
    const qs = ctx.request.qs()
    const page = (list: string) => listQuery(qs, SESSIONS_PER_PAGE, list)
    const contributed = await this.panels.panelsFor(ctx.auth.use('web').user!, user, page)
    return ctx.inertia.render('users/show', {
      ...contributed.rows,
      panels: contributed.panels,
      user: this.summary(user),
      twoFactor: async () => {
        const state = await this.security.twoFactorOf(user)
        return { enrolled: state.enrolled, policy: state.policy, required: state.required }
      },
      delegations: async () => this.users.delegationsOf(user.id, await page('delegations')),
      sesskeys: async () => this.access.sessionsOf(user.id, await page('sesskeys')),
    })
  }

  async store(ctx: HttpContext) {
    const input = await validatedBody(ctx, newUser)
    if (!input || this.refusedPassword(ctx, input.password)) return ctx.response.redirect().back()
    const user = await refusalAsFormError(ctx, () => this.users.create(input, this.by(ctx)))
    if (!user) return ctx.response.redirect().back()
    ctx.session.flash('notice', `User ${user.code} created`)
    return ctx.response.redirect(`/admin/users/${user.id}`)
  }

  async update(ctx: HttpContext) {
    const user = await this.find(ctx)
    const input = await validatedBody(ctx, editUser)
    if (!input) return ctx.response.redirect().back()
    const self = ctx.auth.use('web').user!
    if (user.id === self.id && input.isAdmin === false) {
      ctx.session.flash('errorsBag', { isAdmin: 'You cannot remove your own administrator right' })
      return ctx.response.redirect().back()
    }
    if (await refusalAsFormError(ctx, () => this.users.update(user, input, this.by(ctx))))
      ctx.session.flash('notice', 'Saved')
    return ctx.response.redirect().back()
  }

  async password(ctx: HttpContext) {
    const user = await this.find(ctx)
    const input = await validatedBody(ctx, newPassword)
    if (!input || this.refusedPassword(ctx, input.password)) return ctx.response.redirect().back()
    await this.users.setPassword(user, input.password, this.by(ctx))
    ctx.session.flash('notice', 'Password changed')
    return ctx.response.redirect().back()
  }

  async disable(ctx: HttpContext) {
    const user = await this.find(ctx)
    const input = await validatedBody(ctx, disable)
    if (!input) return ctx.response.redirect().back()
    if (user.id === ctx.auth.use('web').user!.id) {
      ctx.session.flash('errorsBag', { disabled: 'You cannot disable your own account' })
      return ctx.response.redirect().back()
    }
    await this.users.setDisabled(user, input.disabled, this.by(ctx))
    if (input.disabled) {
      // Every way in ends with it: sesskeys and oauthkeys, and the auth service's sessions.
      await this.access.revokeAllSessionsOf(user.id, 'disabled', this.by(ctx))
      await this.security.endAllSessions(user.id, 'disabled')
    }
    ctx.session.flash('notice', input.disabled ? 'Account disabled' : 'Account enabled')
    return ctx.response.redirect().back()
  }

  async twoFactor(ctx: HttpContext) {
    const user = await this.find(ctx)
    const input = await validatedBody(ctx, twoFactor)
    if (!input) return ctx.response.redirect().back()
    if (input.action === 'reset') await this.security.resetTwoFactor(user, this.by(ctx))
    else
      await this.security.setTwoFactorPolicy(
        user,
        input.action === 'require' ? 'required' : input.action === 'optional' ? 'optional' : null,
        this.by(ctx)
      )
    ctx.session.flash('notice', input.action === 'reset' ? 'Two-factor reset' : 'Policy saved')
    return ctx.response.redirect().back()
  }

  async delegate(ctx: HttpContext) {
    const user = await this.find(ctx)
    const input = await validatedBody(ctx, delegation)
    if (!input) return ctx.response.redirect().back()
    const other = await this.users.findByLogin(input.delegate)
    if (!other || other.id === user.id) {
      ctx.session.flash('errorsBag', { delegate: 'No such other user' })
      return ctx.response.redirect().back()
    }
    // direction 'user': `other` lets this user act on its behalf (the reverse of the default).
    const [owner, delegate] = input.direction === 'user' ? [other, user] : [user, other]
    if (input.action === 'grant')
      await this.users.grantDelegation(owner.id, delegate.id, this.by(ctx))
    else await this.users.revokeDelegation(owner.id, delegate.id, this.by(ctx))
    ctx.session.flash(
      'notice',
      input.action === 'grant' ? 'Delegation granted' : 'Delegation revoked'
    )
    return ctx.response.redirect().back()
  }

  async revokeSession(ctx: HttpContext) {
    const user = await this.find(ctx)
    const input = await validatedBody(ctx, revoke)
    if (!input) return ctx.response.redirect().back()
    await this.access.revokeSessionOf(user.id, Number(input.id), 'console', this.by(ctx))
    ctx.session.flash('notice', 'Session revoked')
    return ctx.response.redirect().back()
  }

  /** A plugin panel's row action (end an API session...): the panel's part performs it. */
  async panelAction(ctx: HttpContext) {
    const user = await this.find(ctx)
    const input = await validatedBody(ctx, panelRow)
    if (!input) return ctx.response.redirect().back()
    const { panel, action } = ctx.params
    const viewer = ctx.auth.use('web').user!
    const notice = await this.panels.act(viewer, user, String(panel), String(action), {
      rowId: input.id,
      by: this.by(ctx),
    })
    if (notice === null) return ctx.response.notFound('No such panel action')
    ctx.session.flash('notice', notice)
    return ctx.response.redirect().back()
  }

  /** The signed-in administrator and the request's address, for the audit log. */
  private by(ctx: HttpContext) {
    return userActor(ctx.auth.use('web').user!, ctx.request.ip())
  }
}
