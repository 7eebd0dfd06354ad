import sanitizeHtml from 'sanitize-html'

/**
 * A CSS value that loads nothing: no url(), image-set(), @import,
 * expression() nor escapes that could spell them.
 */
const SAFE_CSS_VALUE = /^(?!.*(?:url|image-set|expression|import|\\)).*$/is

/** Formatting properties an e-mail keeps (colours, fonts, spacing, borders, alignment). */
const STYLE_PROPERTIES = [
  'color',
  'background-color',
  'font',
  'font-family',
  'font-size',
  'font-style',
  'font-weight',
  'line-height',
  'text-align',
  'text-decoration',
  'text-transform',
  'vertical-align',
  'white-space',
  'margin',
  'margin-top',
  'margin-right',
  'margin-bottom',
  'margin-left',
  'padding',
  'padding-top',
  'padding-right',
  'padding-bottom',
  'padding-left',
  'border',
  'border-top',
  'border-right',
  'border-bottom',
  'border-left',
  'border-color',
  'border-style',
  'border-width',
  'border-collapse',
  'border-radius',
  'width',
  'max-width',
  'height',
  'display',
]

const ALLOWED_STYLES = Object.fromEntries(
  STYLE_PROPERTIES.map((property) => [property, [SAFE_CSS_VALUE]])
)

const OPTIONS: sanitizeHtml.IOptions = {
  // The defaults (text, lists, tables, links, headings) plus images and old mail formatting.
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'font', 'center'],
  allowedAttributes: {
    // target and rel: set by transformTags (attributes are filtered after the transform).
    'a': ['href', 'name', 'title', 'target', 'rel'],
    'img': ['src', 'alt', 'title', 'width', 'height'],
    'font': ['color', 'face', 'size'],
    'td': ['colspan', 'rowspan', 'align', 'valign', 'width'],
    'th': ['colspan', 'rowspan', 'align', 'valign', 'width'],
    'table': ['align', 'width', 'cellpadding', 'cellspacing', 'border'],
    '*': ['style', 'align', 'dir', 'lang'],
  },
  allowedStyles: { '*': ALLOWED_STYLES },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  // An image is the message's own inline file (cid:) or nothing: a remote one would tell the sender who read it.
  allowedSchemesByTag: { img: ['cid'] },
  allowProtocolRelative: false,
  // Links open elsewhere, without telling the target where they came from.
  transformTags: {
    a: sanitizeHtml.simpleTransform('a', { target: '_blank', rel: 'noopener noreferrer nofollow' }),
  },
  // script, style, iframe, object, form...: dropped with their content.
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'head'],
}

/**
 * An inbound mail's HTML as Quire stores it (msgBodyHTML): the formatting
 * kept, scripts, event handlers, forms, frames and every remote resource
 * (images other than cid:, CSS url()) dropped.
 */
export function sanitizeMailHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS).trim()
}
