/**
 * A small, safe formula language for formula fields: no access to anything
 * but the row's values, no loops, no host functions.
 *
 *   {Price} * {Quantity}            field references by name, or {f12} by id
 *   "Dear " & {Name}                & concatenates
 *   IF({Qty} > 10, "bulk", "unit")  functions below
 *
 * Operators: + - * / % & = != <> < <= > >= and parentheses. Functions: IF, AND,
 * OR, NOT, CONCAT, UPPER, LOWER, LEN, TRIM, LEFT, RIGHT, ROUND, ABS, MIN, MAX,
 * SUM, AVG, BLANK.
 */

type Value = number | string | boolean | null

type Node =
  | { kind: 'literal'; value: Value }
  | { kind: 'ref'; name: string }
  | { kind: 'unary'; op: string; operand: Node }
  | { kind: 'binary'; op: string; left: Node; right: Node }
  | { kind: 'call'; name: string; args: Node[] }

export class FormulaError extends Error {}

interface Token {
  type: 'num' | 'str' | 'ref' | 'id' | 'op' | '(' | ')' | ','
  text: string
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < source.length) {
    const char = source[i]
    if (/\s/.test(char)) {
      i++
    } else if (/[0-9.]/.test(char)) {
      // 12, 1.5, .5, 5. and an exponent; a lone "." is no number.
      const match = /^(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i.exec(source.slice(i))
      if (!match) throw new FormulaError(`unexpected character "${char}"`)
      tokens.push({ type: 'num', text: match[0] })
      i += match[0].length
    } else if (char === '"' || char === "'") {
      let j = i + 1
      let text = ''
      while (j < source.length && source[j] !== char) {
        if (source[j] === '\\' && j + 1 < source.length) j++
        text += source[j++]
      }
      if (j >= source.length) throw new FormulaError('unterminated string')
      tokens.push({ type: 'str', text })
      i = j + 1
    } else if (char === '{') {
      const end = source.indexOf('}', i)
      if (end === -1) throw new FormulaError('unterminated field reference')
      tokens.push({ type: 'ref', text: source.slice(i + 1, end).trim() })
      i = end + 1
    } else if (/[A-Za-z_]/.test(char)) {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))!
      tokens.push({ type: 'id', text: match[0] })
      i += match[0].length
    } else if (char === '(' || char === ')' || char === ',') {
      tokens.push({ type: char, text: char })
      i++
    } else {
      const match = /^(<=|>=|!=|<>|==|[-+*/%&=<>])/.exec(source.slice(i))
      if (!match) throw new FormulaError(`unexpected character "${char}"`)
      tokens.push({ type: 'op', text: match[0] })
      i += match[0].length
    }
  }
  return tokens
}

const PRECEDENCE: Record<string, number> = {
  '=': 1,
  '==': 1,
  '!=': 1,
  '<>': 1,
  '<': 1,
  '<=': 1,
  '>': 1,
  '>=': 1,
  '&': 2,
  '+': 3,
  '-': 3,
  '*': 4,
  '/': 4,
  '%': 4,
}

export function parseFormula(source: string): Node {
  const tokens = tokenize(source)
  let position = 0
  const peek = () => tokens[position]
  const expect = (type: Token['type']) => {
    const token = tokens[position++]
    if (!token || token.type !== type) throw new FormulaError(`expected ${type}`)
    return token
  }

  const primary = (): Node => {
    const token = tokens[position++]
    if (!token) throw new FormulaError('unexpected end of formula')
    if (token.type === 'num') return { kind: 'literal', value: Number(token.text) }
    if (token.type === 'str') return { kind: 'literal', value: token.text }
    if (token.type === 'ref') return { kind: 'ref', name: token.text }
    if (token.type === 'op' && (token.text === '-' || token.text === '+')) {
      return { kind: 'unary', op: token.text, operand: primary() }
    }
    if (token.type === '(') {
      const inner = expression(0)
      expect(')')
      return inner
    }
    if (token.type === 'id') {
      const upper = token.text.toUpperCase()
      if (upper === 'TRUE' || upper === 'FALSE') return { kind: 'literal', value: upper === 'TRUE' }
      if (!FUNCTIONS[upper]) throw new FormulaError(`unknown function ${token.text}`)
      expect('(')
      const args: Node[] = []
      if (peek()?.type !== ')') {
        args.push(expression(0))
        while (peek()?.type === ',') {
          position++
          args.push(expression(0))
        }
      }
      expect(')')
      return { kind: 'call', name: upper, args }
    }
    throw new FormulaError(`unexpected "${token.text}"`)
  }

  const expression = (minimum: number): Node => {
    let left = primary()
    for (;;) {
      const token = peek()
      if (!token || token.type !== 'op') break
      const precedence = PRECEDENCE[token.text]
      if (precedence === undefined || precedence <= minimum - 1 || precedence < minimum) break
      position++
      const right = expression(precedence + 1)
      left = { kind: 'binary', op: token.text, left, right }
    }
    return left
  }

  const tree = expression(0)
  if (position < tokens.length) throw new FormulaError(`unexpected "${tokens[position].text}"`)
  return tree
}

const num = (value: Value) => {
  if (value === null || value === '') return 0
  if (typeof value === 'boolean') return value ? 1 : 0
  const number = Number(value)
  return Number.isFinite(number) ? number : 0
}
const str = (value: Value) =>
  value === null ? '' : typeof value === 'number' ? String(value) : String(value)
const truthy = (value: Value) => value !== null && value !== '' && value !== 0 && value !== false

const FUNCTIONS: Record<string, (args: Value[]) => Value> = {
  IF: ([condition, then, otherwise]) => (truthy(condition) ? (then ?? null) : (otherwise ?? null)),
  AND: (args) => args.every(truthy),
  OR: (args) => args.some(truthy),
  NOT: ([value]) => !truthy(value),
  CONCAT: (args) => args.map(str).join(''),
  UPPER: ([value]) => str(value).toUpperCase(),
  LOWER: ([value]) => str(value).toLowerCase(),
  LEN: ([value]) => str(value).length,
  TRIM: ([value]) => str(value).trim(),
  LEFT: ([value, count]) => str(value).slice(0, num(count)),
  RIGHT: ([value, count]) => (num(count) <= 0 ? '' : str(value).slice(-num(count))),
  ROUND: ([value, digits]) => {
    const factor = 10 ** num(digits ?? 0)
    return Math.round(num(value) * factor) / factor
  },
  ABS: ([value]) => Math.abs(num(value)),
  MIN: (args) => (args.length ? Math.min(...args.map(num)) : null),
  MAX: (args) => (args.length ? Math.max(...args.map(num)) : null),
  SUM: (args) => args.reduce<number>((total, value) => total + num(value), 0),
  AVG: (args) =>
    args.length ? args.reduce<number>((total, value) => total + num(value), 0) / args.length : null,
  BLANK: () => null,
}

function compare(op: string, left: Value, right: Value): boolean {
  const numeric = typeof left === 'number' || typeof right === 'number'
  const a = numeric ? num(left) : str(left)
  const b = numeric ? num(right) : str(right)
  switch (op) {
    case '=':
    case '==':
      return a === b
    case '!=':
    case '<>':
      return a !== b
    case '<':
      return a < b
    case '<=':
      return a <= b
    case '>':
      return a > b
    default:
      return a >= b
  }
}

export function evaluate(node: Node, resolve: (name: string) => Value): Value {
  switch (node.kind) {
    case 'literal':
      return node.value
    case 'ref':
      return resolve(node.name)
    case 'unary':
      return node.op === '-'
        ? -num(evaluate(node.operand, resolve))
        : num(evaluate(node.operand, resolve))
    case 'call':
      if (node.name === 'IF') {
        const [condition, then, otherwise] = node.args
        return truthy(evaluate(condition, resolve))
          ? then
            ? evaluate(then, resolve)
            : null
          : otherwise
            ? evaluate(otherwise, resolve)
            : null
      }
      return FUNCTIONS[node.name](node.args.map((arg) => evaluate(arg, resolve)))
    case 'binary': {
      const left = evaluate(node.left, resolve)
      const right = evaluate(node.right, resolve)
      switch (node.op) {
        case '+':
          return num(left) + num(right)
        case '-':
          return num(left) - num(right)
        case '*':
          return num(left) * num(right)
        case '/':
          return num(right) === 0 ? null : num(left) / num(right)
        case '%':
          return num(right) === 0 ? null : num(left) % num(right)
        case '&':
          return str(left) + str(right)
        default:
          return compare(node.op, left, right)
      }
    }
  }
}

/** The field references of a formula (names or f<id>), for validation. */
export function references(node: Node, found: string[] = []): string[] {
  if (node.kind === 'ref') found.push(node.name)
  else if (node.kind === 'unary') references(node.operand, found)
  else if (node.kind === 'binary') {
    references(node.left, found)
    references(node.right, found)
  } else if (node.kind === 'call') node.args.forEach((arg) => references(arg, found))
  return found
}

export type FormulaNode = Node
