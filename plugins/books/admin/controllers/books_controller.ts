import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { UserService } from '#core/services/user_service'
import { consoleActor } from '#admin/actor'
import { BookService } from '../../services/book_service.js'
import { MemberService } from '../../services/member_service.js'
import { MessageQueries } from '../../services/message_queries.js'
import { BookAccessService } from '../../services/book_access_service.js'
import { BookDirectory } from '../book_directory.js'
import { RIGHT_LABELS } from '../../rights.js'
import { refusalAsFormError, validatedBody } from '#admin/forms'
import { listQuery } from '#admin/list_query'
import type { PageRequest } from '#core/paging'

const PER_PAGE = 25
const MESSAGES_PER_PAGE = 20
const MEMBERS_PER_PAGE = 25

const newBook = vine.compile(
  vine.object({
    code: vine.string().trim().maxLength(100),
    title: vine.string().trim().maxLength(200).optional(),
    owner: vine.string().trim().maxLength(191).optional(),
  })
)
const invitation = vine.compile(
  vine.object({
    login: vine.string().trim().maxLength(191),
    right: vine.number().withoutDecimals().min(1).max(4),
  })
)
const rightChange = vine.compile(
  vine.object({ right: vine.number().withoutDecimals().min(1).max(4) })
)
const archiving = vine.compile(vine.object({ archived: vine.boolean() }))

/**
 * The books plugin's console pages (/admin/books). Writes go through the
 * same services as api.php's createBook, inviteMember, setMemberRight,
 * removeMember and archiveBook, acting as the book's owner on the signed-in
 * administrator's behalf: rights, stamps, events and socket notices hold.
 */
@inject()
export default class BooksController {
  private directory = new BookDirectory()

  constructor(
    private books: BookService,
    private members: MemberService,
    private messages: MessageQueries,
    private access: BookAccessService,
    private users: UserService
  ) {}

  async index({ inertia, request }: HttpContext) {
    const books = await this.directory.search(await listQuery(request.qs(), PER_PAGE))
    return inertia.render('books/index', { books })
  }

  /**
   * One book. Its members and its messages are two lists, each with its own
   * page and search (membersPage/membersSearch, page/search): props are
   * functions, so a partial reload of one list reads only that list.
   */
  async show(ctx: HttpContext) {
    const book = await this.find(ctx)
    const qs = ctx.request.qs()
    return ctx.inertia.render('books/show', {
      book,
      rights: RIGHT_LABELS,
      members: async () =>
        this.directory.members(book.id, await listQuery(qs, MEMBERS_PER_PAGE, 'members')),
      messages: async () => this.messagePage(book.id, await listQuery(qs, MESSAGES_PER_PAGE)),
    })
  }

  /** A page of the message browser, newest first, through the service behind getBookMessages. */
  private async messagePage(bookId: number, query: PageRequest & { search: string }) {
    const ref = (await this.access.findById(bookId))!
    const search = query.search || undefined
    const total = await this.messages.count(bookId, search)
    // A page past the last reads the last one (a list that shrank under the pager).
    const page = Math.max(1, Math.min(query.page, Math.ceil(total / query.perPage)))
    const messages = total
      ? await this.messages.list(ref, { nbMax: query.perPage, page, search })
      : []
    return {
      items: messages.map((message: any) => ({
        smid: Number(message.smid),
        u_c: message.u_c,
        msg: String(message.msg ?? '').slice(0, 500),
        created: Number(message.created ?? 0),
        type: message.msgType ?? null,
      })),
      total,
      page,
      perPage: query.perPage,
      search: query.search,
    }
  }

  async store(ctx: HttpContext) {
    const input = await validatedBody(ctx, newBook)
    if (!input) return ctx.response.redirect().back()
    const administrator = ctx.auth.use('web').user!
    const owner = input.owner ? await this.users.findByLogin(input.owner) : administrator
    if (!owner) {
      ctx.session.flash('errorsBag', { owner: 'No such user' })
      return ctx.response.redirect().back()
    }
    const created = await refusalAsFormError(ctx, () =>
      this.books.create(consoleActor(owner, administrator), { b_c: input.code, title: input.title })
    )
    if (!created) return ctx.response.redirect().back()
    const ref = await this.access.resolve(owner.code, input.code)
    ctx.session.flash('notice', `Book ${input.code} created`)
    return ctx.response.redirect(ref ? `/admin/books/${ref.id}` : '/admin/books')
  }

  async invite(ctx: HttpContext) {
    const book = await this.find(ctx)
    const input = await validatedBody(ctx, invitation)
    if (!input) return ctx.response.redirect().back()
    if (
      await this.asOwner(ctx, book, (actor) =>
        this.members.invite(actor, book.owner, book.code, input.login, input.right)
      )
    )
      ctx.session.flash('notice', `${input.login} invited`)
    return ctx.response.redirect().back()
  }

  async setRight(ctx: HttpContext) {
    const book = await this.find(ctx)
    const input = await validatedBody(ctx, rightChange)
    if (!input) return ctx.response.redirect().back()
    const member = await this.users.findById(Number(ctx.params.userId))
    if (
      member &&
      (await this.asOwner(ctx, book, (actor) =>
        this.members.setRight(actor, book.owner, book.code, member.code, input.right)
      ))
    )
      ctx.session.flash('notice', 'Right changed')
    return ctx.response.redirect().back()
  }

  async removeMember(ctx: HttpContext) {
    const book = await this.find(ctx)
    const member = await this.users.findById(Number(ctx.params.userId))
    if (
      member &&
      (await this.asOwner(ctx, book, (actor) =>
        this.members.remove(actor, book.owner, book.code, member.code)
      ))
    )
      ctx.session.flash('notice', `${member.code} removed`)
    return ctx.response.redirect().back()
  }

  async archive(ctx: HttpContext) {
    const book = await this.find(ctx)
    const input = await validatedBody(ctx, archiving)
    if (!input) return ctx.response.redirect().back()
    if (
      await this.asOwner(ctx, book, (actor) =>
        this.books.setArchived(actor, book.owner, book.code, input.archived)
      )
    )
      ctx.session.flash('notice', input.archived ? 'Book archived' : 'Book unarchived')
    return ctx.response.redirect().back()
  }

  async destroy(ctx: HttpContext) {
    const book = await this.find(ctx)
    if (
      !(await this.asOwner(ctx, book, (actor) => this.books.delete(actor, book.owner, book.code)))
    )
      return ctx.response.redirect().back()
    ctx.session.flash('notice', `Book ${book.code} deleted`)
    return ctx.response.redirect('/admin/books')
  }

  private async find(ctx: HttpContext) {
    const id = Number(ctx.params.id)
    const book = Number.isSafeInteger(id) ? await this.directory.find(id) : null
    if (!book) ctx.response.abort('Not found', 404)
    return book!
  }

  /** Runs a service call as the book's owner, on the administrator's behalf; a refusal becomes a form error. */
  private async asOwner<T>(
    ctx: HttpContext,
    book: { ownerId: number },
    action: (actor: ReturnType<typeof consoleActor>) => Promise<T>
  ) {
    const owner = await this.users.findById(book.ownerId)
    if (!owner) return null
    return refusalAsFormError(ctx, () =>
      action(consoleActor(owner, ctx.auth.use('web').user!, ctx.request.ip()))
    )
  }
}
