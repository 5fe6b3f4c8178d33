// JSON with positions, for the configuration file.
//
// JSON.parse reports syntax errors in V8's words and by offset (sometimes not at all), and
// silently keeps the last of duplicate keys; a duplicated connection name would drop a
// connection without a word. This small parser gives line and column, says what was expected,
// records where each value is (problems are listed in file order) and reports duplicate keys.
// Leaf tokens are decoded by JSON.parse itself.
//
// Why not a maintained parser: jsonc-parser 3.3.1 (Microsoft's; with comments and trailing
// commas turned off it reads strict JSON, which the file is) gives offsets, but reports
// a missing comma at the value after it (line 4, column 5 in test/config/config.test.ts's case,
// where this parser says line 3, column 22, the end of the value that lacks it) and a line
// break inside a string at the string's start rather than at the break, and its errors
// are bare codes; turning them into the messages and positions below would take a second
// scan of the text as long as this parser.

export class JsonSyntaxError extends Error {
  readonly offset: number;
  readonly reason: string;
  constructor(offset: number, reason: string) {
    super(reason);
    this.offset = offset;
    this.reason = reason;
  }
}

export interface ParsedJson {
  value: unknown;
  /** JSON pointer → offset of the value (of its key, for object members). */
  offsets: Map<string, number>;
  duplicates: Array<{ pointer: string; offset: number; message: string }>;
}

const MAX_DEPTH = 500;

/** The value of `text`, where each value is, and the keys given twice; a JsonSyntaxError at the first syntax error. */
export function parseJson(text: string): ParsedJson {
  const offsets = new Map<string, number>();
  const duplicates: ParsedJson['duplicates'] = [];
  let i = 0;

  const fail = (reason: string, at = i): never => {
    throw new JsonSyntaxError(at, reason);
  };
  const here = (): string => (i >= text.length ? 'the end of the file' : describeChar(text[i]!));
  // After a value, the start of another one means the separator was forgotten.
  const startsValue = (): boolean => i < text.length && /["{[0-9tfn-]/.test(text[i]!);

  const skipSpace = (): void => {
    for (;;) {
      const ch = text[i];
      if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') i++;
      else if (ch === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) fail('comments are not allowed in JSON');
      else return;
    }
  };

  const parseString = (): string => {
    const start = i;
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string (missing closing ")', start);
      const c = text.charCodeAt(i);
      if (c === 0x22) break;
      if (c < 0x20) fail(c === 0x0a ? 'line break inside a string (write it as \\n)' : 'control character inside a string (escape it)');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6))) fail('invalid \\u escape (four hex digits expected)');
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail(`invalid escape "\\${e ?? ''}" in a string`);
        i += 2;
        continue;
      }
      i++;
    }
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };

  const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

  const parseValue = (pointer: string, depth: number): unknown => {
    if (depth > MAX_DEPTH) fail('nested too deeply');
    skipSpace();
    if (!offsets.has(pointer)) offsets.set(pointer, i);
    const ch = text[i];
    if (ch === '{') return parseObject(pointer, depth);
    if (ch === '[') return parseArray(pointer, depth);
    if (ch === '"') return parseString();
    if (ch === "'") fail('strings must be in double quotes');
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) fail('invalid number');
      const after = text[i + m![0].length];
      if (after !== undefined && /[0-9A-Za-z.+-]/.test(after)) fail('invalid number', i + m![0].length);
      i += m![0].length;
      return JSON.parse(m![0]) as number;
    }
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i) && !/[A-Za-z0-9_]/.test(text[i + word.length] ?? '')) {
        i += word.length;
        return value;
      }
    }
    if (ch !== undefined && /[A-Za-z_]/.test(ch))
      fail(`unexpected word "${/^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0]}" (strings must be in double quotes)`);
    return fail(`expected a value, found ${here()}`);
  };

  const parseObject = (pointer: string, depth: number): Record<string, unknown> => {
    const obj: Record<string, unknown> = {};
    const keyOffsets = new Map<string, number>();
    i++;
    skipSpace();
    if (text[i] === '}') {
      i++;
      return obj;
    }
    for (;;) {
      skipSpace();
      if (text[i] !== '"') {
        if (text[i] === '}') fail('trailing comma before "}" is not allowed in JSON');
        if (text[i] === "'") fail('property names must be in double quotes');
        if (text[i] !== undefined && /[A-Za-z_$]/.test(text[i]!)) fail('property names must be in double quotes');
        fail(`expected a property name in double quotes, found ${here()}`);
      }
      const keyAt = i;
      const key = parseString();
      const memberPointer = `${pointer}/${escapePointer(key)}`;
      const earlier = keyOffsets.get(key);
      if (earlier !== undefined) {
        duplicates.push({
          pointer: memberPointer,
          offset: keyAt,
          message: `${JSON.stringify(key)} is given twice (first on line ${lineColumn(text, earlier).line}); only one may be given`,
        });
      } else {
        keyOffsets.set(key, keyAt);
        offsets.set(memberPointer, keyAt);
      }
      skipSpace();
      if (text[i] !== ':') fail(`expected ":" after the property name ${JSON.stringify(key)}, found ${here()}`);
      i++;
      // defineProperty, not assignment: a "__proto__" key must stay an ordinary property, as with JSON.parse.
      Object.defineProperty(obj, key, { value: parseValue(memberPointer, depth + 1), enumerable: true, writable: true, configurable: true });
      const valueEnd = i;
      skipSpace();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return obj;
      }
      // A forgotten comma is reported where it belongs, at the end of the line before.
      if (startsValue()) fail(`missing "," after the value of ${JSON.stringify(key)}`, valueEnd);
      fail(`expected "," or "}" after the value of ${JSON.stringify(key)}, found ${here()}`);
    }
  };

  const parseArray = (pointer: string, depth: number): unknown[] => {
    const arr: unknown[] = [];
    i++;
    skipSpace();
    if (text[i] === ']') {
      i++;
      return arr;
    }
    for (;;) {
      skipSpace();
      if (text[i] === ']') fail('trailing comma before "]" is not allowed in JSON');
      arr.push(parseValue(`${pointer}/${arr.length}`, depth + 1));
      const valueEnd = i;
      skipSpace();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return arr;
      }
      if (startsValue()) fail('missing "," after a list item', valueEnd);
      fail(`expected "," or "]" after a list item, found ${here()}`);
    }
  };

  skipSpace();
  if (i >= text.length) fail('the file is empty (write {} for all defaults)');
  const value = parseValue('', 0);
  skipSpace();
  if (i < text.length) fail(`unexpected ${here()} after the end of the top-level value`);
  return { value, offsets, duplicates };
}

function describeChar(ch: string): string {
  if (ch === '\n' || ch === '\r') return 'the end of the line';
  return ch === '"' ? `'"'` : JSON.stringify(ch);
}

/** 1-based line and column of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text[k] === '\n') {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** A key as a JSON pointer segment (RFC 6901: `~` and `/` escaped). */
export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
