import { test } from '@japa/runner'
import { client, sharedBook } from '#plugins/books/tests/helpers/books'
import { dimensions, fetchPath, files, upload, widthOf } from '../helpers/media.js'

test.group('profile images and covers', () => {
  test('setProfileImage: the stamp rule, tb/full only, the default icon for non-contacts', async ({
    assert,
  }) => {
    const { owner, members } = await sharedBook(2)
    const [contact] = members
    const stranger = await client()
    const set = await upload(
      owner.session,
      {},
      { bytes: await files.jpeg(600, 600), name: 'me.jpg' },
      'setProfileImage'
    )
    assert.equal(set.status, 'ok', JSON.stringify(set))
    assert.isAbove(set.uimgStamp, 0)
    const info = await owner.call({ req: 'getUserInfo' })
    assert.equal(info.userInfo.uimgStamp, set.uimgStamp)

    const path = (size: string) => `/live/dbi/ui/${size}/${owner.code}/${set.uimgStamp}`
    const own = await fetchPath(path('tb'), { session: owner.session })
    assert.equal(await widthOf(own.bytes), 150)
    assert.match(own.headers.get('cache-control')!, /immutable/)
    const full = await fetchPath(path('full'), { session: contact.session })
    assert.equal(await widthOf(full.bytes), 600)
    const other = await fetchPath(path('norm'), { session: contact.session })
    assert.equal(await widthOf(other.bytes), 150, 'any other size is tb')
    const old = await fetchPath(`/live/dbi/ui/tb/${owner.code}/1`, { session: contact.session })
    assert.match(old.headers.get('cache-control')!, /no-cache/)

    const icon = await fetchPath(path('full'), { session: stranger.session })
    const anonymous = await fetchPath(path('full'))
    const noImage = await fetchPath(`/live/dbi/ui/tb/${contact.code}/0`, { session: owner.session })
    for (const answer of [icon, anonymous, noImage]) {
      assert.equal(answer.status, 200)
      assert.deepEqual(answer.bytes, icon.bytes)
      const size = await dimensions(answer.bytes)
      assert.equal(size.width, 150)
    }

    const notImage = await upload(
      owner.session,
      {},
      { bytes: files.pdf(), name: 'x.pdf' },
      'setProfileImage'
    )
    assert.equal(notImage.errorCode, 'INVALID_PARAMETER')
  })

  test('setBookCover: owner oCoverImg, member uCoverImg, last image; covers are fetched by plain GET', async ({
    assert,
  }) => {
    const { owner, members, target } = await sharedBook(2)
    const [member] = members
    const cover = await upload(
      owner.session,
      target,
      { bytes: await files.jpeg(1000, 800), name: 'cover.jpg' },
      'setBookCover'
    )
    assert.equal(cover.status, 'ok', JSON.stringify(cover))
    assert.equal(cover.as, 'owner')
    assert.match(cover.oCoverImg, /^\/live\/dbi\/in\/cover\/[0-9a-f]{32}\.jpg\/cover\.jpg$/)
    const info = await owner.call({ req: 'getBookInfo', ...target })
    assert.equal(info.book.ownerPrefs.oCoverImg, cover.oCoverImg)
    const fetched = await fetchPath(`/${cover.oCoverImg}`)
    assert.equal(fetched.status, 200)
    assert.equal(await widthOf(fetched.bytes), 400)

    const denied = await upload(
      member.session,
      { ...target, as: 'owner' },
      { bytes: await files.png(), name: 'x.png' },
      'setBookCover'
    )
    assert.equal(denied.errorCode, 'FORBIDDEN')
    const mine = await upload(
      member.session,
      target,
      { bytes: await files.png(), name: 'm.png' },
      'setBookCover'
    )
    assert.equal(mine.as, 'member')
    const memberInfo = await member.call({ req: 'getBookInfo', ...target })
    assert.equal(memberInfo.book.userPrefs.uCoverImg, mine.uCoverImg)

    const sent = await owner.call({ req: 'sendMsg', ...target, msg: 'pic' })
    const smid = sent.createMessageId
    const posted = await upload(
      owner.session,
      { ...target, smid },
      { bytes: await files.webp(), name: 'w.webp' }
    )
    const last = await upload(owner.session, { ...target, useLast: 1 }, null, 'setBookCover')
    assert.equal(last.status, 'ok', JSON.stringify(last))
    assert.isTrue(last.oCoverUseLastImg)
    assert.include(last.oCoverImg, posted.internName)
    const byUuid = await upload(
      member.session,
      { ...target, uuid: posted.uuid },
      null,
      'setBookCover'
    )
    assert.include(byUuid.uCoverImg, posted.internName)

    const stranger = await client()
    const foreign = await upload(
      stranger.session,
      target,
      { bytes: await files.png(), name: 'x.png' },
      'setBookCover'
    )
    assert.equal(foreign.errorCode, 'NOT_FOUND')
  })
})
