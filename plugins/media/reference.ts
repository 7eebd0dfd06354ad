import { defineReference } from '#core/reference/types'

const session = [
  {
    name: 'o_u',
    in: 'query',
    required: false,
    schema: { type: 'string' },
    description: 'user code (or POST form)',
  },
  { name: 'u_c', in: 'query', required: false, schema: { type: 'string' } },
  { name: 'sesskey', in: 'query', required: false, schema: { type: 'string' } },
]
const pathParam = (
  name: string,
  description: string,
  schema: Record<string, unknown> = { type: 'string' }
) => ({
  name,
  in: 'path',
  required: true,
  schema,
  description,
})
const size = pathParam(
  'size',
  'norm (1500 px), cover (400 px), tb or _tb (150 px), full (the original)',
  {
    type: 'string',
    enum: ['norm', 'cover', 'tb', '_tb', 'full'],
  }
)
const file = {
  '200': {
    description: 'the file (Content-Type sniffed, ETag, Last-Modified, ranges)',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  },
  '206': { description: 'a byte range' },
  '304': { description: 'not modified' },
  '403': { description: 'no valid session (bare, no body)' },
  '404': { description: 'not found or not visible (bare, no body)' },
  '503': { description: 'derivatives busy: Retry-After' },
}
const tusHeaders = {
  'Tus-Resumable': { schema: { type: 'string', const: '1.0.0' } },
}

/**
 * The media plugin's operations and its HTTP routes (the /dbi URL family, spec
 * 4.A.4, and the tus endpoint of resumableUpload) as the API reference and the
 * MCP tools show them (docs/api-reference.md). Kept true to README.md.
 */
export default defineReference({
  operations: {
    fileUpload: {
      summary: 'Upload a file to a message or a file cell',
      description:
        'Multipart part `qqfile`, attached to a message (`smid`, or its `uuid` with b_o/b_c) or to a file cell (`rowId` + `fieldId`; a `tmp...` rowId creates the row). Answers the fields of spec 2.11 and the /dbi URLs.',
      returns: {
        success: 'true',
        smid: 'message',
        uuid: 'file uuid',
        type: 'media or doc',
        mdc: 'rank among the files of that type',
        url: '/live/dbi/in/full/<uuid>/<name>',
        preview: 'thumbnail URL',
        sstamp: 'server stamp',
      },
      example: { b_o: 'alice', b_c: 'team', smid: 42 },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE'],
    },
    resumableUpload: {
      summary: 'Where to upload resumably (tus)',
      description:
        'The upload itself is the tus endpoint (`POST /live/upload`, below); this answers its URL so a client holding only api.php can find it.',
      returns: {
        upload_url: 'absolute tus URL',
        upload_path: 'its path',
        maxSize: 'largest upload in bytes',
        protocol: 'tus 1.0.0',
      },
      example: {},
      errors: ['INVALID_SESSKEY'],
    },
    setProfileImage: {
      summary: "Set the user's profile image",
      description: 'Multipart part `qqfile`, an image; answers uimgStamp and the /dbi/ui URLs.',
      returns: {
        uimgStamp: 'the new image stamp',
        url: '/dbi/ui/tb/... URL',
        urlFull: '/dbi/ui/full/... URL',
      },
      example: {},
      errors: ['INVALID_PARAMETER', 'MISSING_PARAMETER', 'PAYLOAD_TOO_LARGE'],
    },
    setBookCover: {
      summary: "Set a book's cover",
      description:
        "A book's cover from an upload (`qqfile`), an image of the book (`uuid`) or its last image (`useLast=1`); `as` owner (ownerPrefs.oCoverImg, right 4) or member (the caller's userPrefs.uCoverImg).",
      returns: {
        as: 'owner or member',
        oCoverImg: 'root-relative cover URL (owner)',
        uCoverImg: 'root-relative cover URL (member)',
      },
      example: { b_o: 'alice', b_c: 'team', useLast: 1, as: 'owner' },
      errors: ['NOT_FOUND', 'FORBIDDEN', 'INVALID_PARAMETER', 'PAYLOAD_TOO_LARGE'],
    },
  },
  paths: {
    '/live/dbi/{form}/{size}/{b_o}/{b_c}/{smid}/{mdc}': {
      get: {
        tags: ['media URLs'],
        operationId: 'dbiMessageFile',
        summary: "A message's file by rank",
        description:
          'Forms `ic`, `oic`, `dc`, `odc` (image / document, original for the o- forms). Needs a session (query string, POST form or plain GET) and membership of the book. HEAD and POST are served too.',
        parameters: [
          pathParam('form', 'ic, oic, dc or odc', {
            type: 'string',
            enum: ['ic', 'oic', 'dc', 'odc'],
          }),
          size,
          pathParam('b_o', 'book owner'),
          pathParam('b_c', 'book code'),
          pathParam('smid', 'message id', { type: 'integer' }),
          pathParam('mdc', "rank among the message's files of that type", { type: 'integer' }),
          ...session,
        ],
        responses: file,
      },
    },
    '/live/dbi/{form}/{size}/{b_o}/{b_c}/{id}': {
      get: {
        tags: ['media URLs'],
        operationId: 'dbiBookFile',
        summary: "A book's file by id",
        description: 'Forms `ii`, `oii`, `di`, `odi`. Needs a session and membership of the book.',
        parameters: [
          pathParam('form', 'ii, oii, di or odi', {
            type: 'string',
            enum: ['ii', 'oii', 'di', 'odi'],
          }),
          size,
          pathParam('b_o', 'book owner'),
          pathParam('b_c', 'book code'),
          pathParam('id', 'file id', { type: 'integer' }),
          ...session,
        ],
        responses: file,
      },
    },
    '/live/dbi/last/{size}/{b_o}/{b_c}': {
      get: {
        tags: ['media URLs'],
        operationId: 'dbiLastImage',
        summary: "A book's last image",
        description: 'Needs a session and membership of the book.',
        parameters: [
          size,
          pathParam('b_o', 'book owner'),
          pathParam('b_c', 'book code'),
          ...session,
        ],
        responses: file,
      },
    },
    '/live/dbi/{form}/{size}/{name}': {
      get: {
        tags: ['media URLs'],
        operationId: 'dbiByName',
        summary: 'A file by its internal name or uuid',
        description:
          'Forms `in`, `dn`, `odn`: no session, the unguessable name is the key. `oin` (also `oin/{size}/{b_o}/{b_c}/{name}`) needs a session that may see the file.',
        parameters: [
          pathParam('form', 'in, dn, odn (no session) or oin (session)', {
            type: 'string',
            enum: ['in', 'dn', 'odn', 'oin'],
          }),
          size,
          pathParam('name', 'internal name or uuid'),
          ...session,
        ],
        responses: file,
      },
    },
    '/live/dbi/ui/{size}/{userCode}/{stamp}': {
      get: {
        tags: ['media URLs'],
        operationId: 'dbiUserImage',
        summary: "A user's profile image",
        description:
          'The user or a direct contact gets the image (any size but full is tb); anyone else, or a user without one, the default icon. With the current uimgStamp it may be cached for good.',
        parameters: [
          pathParam('size', 'tb or full', { type: 'string', enum: ['tb', 'full'] }),
          pathParam('userCode', "the user's code"),
          pathParam('stamp', 'uimgStamp', { type: 'integer' }),
          ...session,
        ],
        responses: file,
      },
    },
    '/live/upload': {
      post: {
        tags: ['uploads (tus)'],
        operationId: 'tusCreate',
        summary: 'Create a resumable upload (tus 1.0.0 creation)',
        description:
          'Upload-Metadata carries o_u, u_c, sesskey, b_o, b_c and the target (`smid` or `uuid` of a message, or `rowId` + `fieldId`), base64 as tus wants. The upload then goes by PATCH to the Location answered; HEAD gives its offset. Refusals: 403 (session, restrictions, rights), 404, 413.',
        parameters: [
          {
            name: 'Tus-Resumable',
            in: 'header',
            required: true,
            schema: { type: 'string', const: '1.0.0' },
          },
          {
            name: 'Upload-Length',
            in: 'header',
            required: true,
            schema: { type: 'integer', minimum: 0 },
          },
          {
            name: 'Upload-Metadata',
            in: 'header',
            required: true,
            schema: { type: 'string' },
            description: 'key base64(value) pairs, comma-separated',
          },
        ],
        responses: {
          '201': {
            description: 'created; Location is the upload URL',
            headers: { ...tusHeaders, Location: { schema: { type: 'string' } } },
          },
          '403': {
            description: 'no valid session, a restricted or read-only session, or no right',
          },
          '404': { description: 'the target is not found or not visible' },
          '413': { description: 'larger than the configured maximum' },
        },
      },
    },
    '/live/upload/{uploadId}': {
      head: {
        tags: ['uploads (tus)'],
        operationId: 'tusOffset',
        summary: "An upload's offset",
        parameters: [pathParam('uploadId', 'from the creation Location')],
        responses: {
          '200': { description: 'Upload-Offset, Upload-Length', headers: tusHeaders },
          '404': { description: 'unknown' },
          '410': { description: 'expired' },
        },
      },
      patch: {
        tags: ['uploads (tus)'],
        operationId: 'tusPatch',
        summary: 'Send a chunk',
        description:
          'Content-Type application/offset+octet-stream (415 otherwise), Upload-Offset the current offset. The last chunk attaches the file like fileUpload.',
        parameters: [
          pathParam('uploadId', 'from the creation Location'),
          {
            name: 'Upload-Offset',
            in: 'header',
            required: true,
            schema: { type: 'integer', minimum: 0 },
          },
        ],
        requestBody: {
          content: {
            'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } },
          },
        },
        responses: {
          '204': { description: 'accepted; Upload-Offset is the new offset', headers: tusHeaders },
          '409': { description: 'offset mismatch' },
          '410': { description: 'expired' },
          '415': { description: 'wrong content type' },
        },
      },
    },
    '/live/upload/upload_meta/{fileId}': {
      get: {
        tags: ['uploads (tus)'],
        operationId: 'tusMeta',
        summary: "A finished upload's file fields",
        description: 'The fields fileUpload answers for the file an upload made.',
        parameters: [pathParam('fileId', 'the upload id')],
        responses: {
          '200': {
            description: 'the file fields (JSON)',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          '404': { description: 'unknown' },
        },
      },
    },
  },
})
