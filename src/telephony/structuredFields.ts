// The part of RFC 8941 (Structured Field Values for HTTP) that HTTP message signatures use:
// dictionaries whose members are items or inner lists with parameters, parsed strictly per
// its §4.2, and inner lists serialized per §4.1 (the `@signature-params` line is one).

/** A bare item: integer or decimal, string, token, byte sequence or boolean (RFC 8941 §3.3). */
export type BareItem = number | string | Token | Uint8Array | boolean;

/** A token (`hmac-sha256` unquoted), kept apart from a string because they serialize differently. */
export class Token {
  constructor(readonly value: string) {}
}

/** Parameters in their order (RFC 8941 §3.1.2: an ordered map). */
export type Parameters = ReadonlyArray<readonly [string, BareItem]>;

export interface Item {
  readonly value: BareItem;
  readonly params: Parameters;
}

export interface InnerList {
  readonly items: readonly Item[];
  readonly params: Parameters;
}

/** A dictionary member: an item or an inner list. */
export type Member = Item | InnerList;

/** Whether a member is an inner list. */
export function isInnerList(m: Member): m is InnerList {
  return 'items' in m;
}

/** A header's value that is not a well-formed structured field. */
export class StructuredFieldError extends Error {}

/** Parse a dictionary field value (RFC 8941 §4.2.2); throws StructuredFieldError when malformed. */
export function parseDictionary(input: string): Map<string, Member> {
  const p = new Parser(input);
  const dict = new Map<string, Member>();
  p.skipSP();
  while (!p.done) {
    const key = p.key();
    let member: Member;
    if (p.peek() === '=') {
      p.pos++;
      member = p.itemOrInnerList();
    } else {
      member = { value: true, params: p.parameters() };
    }
    dict.set(key, member);
    p.skipOWS();
    if (p.done) break;
    if (p.next() !== ',') throw new StructuredFieldError('expected a comma between dictionary members');
    p.skipOWS();
    if (p.done) throw new StructuredFieldError('a trailing comma');
  }
  return dict;
}

class Parser {
  pos = 0;
  constructor(private readonly s: string) {}

  get done(): boolean {
    return this.pos >= this.s.length;
  }

  peek(): string {
    return this.s[this.pos] ?? '';
  }

  next(): string {
    return this.s[this.pos++] ?? '';
  }

  skipSP(): void {
    while (this.peek() === ' ') this.pos++;
  }

  skipOWS(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }

  key(): string {
    const m = /^[a-z*][a-z0-9_\-.*]*/.exec(this.s.slice(this.pos));
    if (!m) throw new StructuredFieldError(`expected a key at ${this.pos}`);
    this.pos += m[0].length;
    return m[0];
  }

  itemOrInnerList(): Member {
    if (this.peek() === '(') return this.innerList();
    return { value: this.bareItem(), params: this.parameters() };
  }

  innerList(): InnerList {
    this.pos++; // (
    const items: Item[] = [];
    for (;;) {
      this.skipSP();
      if (this.peek() === ')') {
        this.pos++;
        return { items, params: this.parameters() };
      }
      items.push({ value: this.bareItem(), params: this.parameters() });
      const c = this.peek();
      if (c !== ' ' && c !== ')') throw new StructuredFieldError('expected a space or ) in an inner list');
    }
  }

  parameters(): Parameters {
    const params: Array<readonly [string, BareItem]> = [];
    while (this.peek() === ';') {
      this.pos++;
      this.skipSP();
      const key = this.key();
      let value: BareItem = true;
      if (this.peek() === '=') {
        this.pos++;
        value = this.bareItem();
      }
      const at = params.findIndex(([k]) => k === key);
      if (at >= 0) params.splice(at, 1);
      params.push([key, value]);
    }
    return params;
  }

  bareItem(): BareItem {
    const c = this.peek();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    if (c === '"') return this.string();
    if (c === ':') return this.bytes();
    if (c === '?') return this.boolean();
    if (/[A-Za-z*]/.test(c)) return this.token();
    throw new StructuredFieldError(`unexpected ${JSON.stringify(c)} at ${this.pos}`);
  }

  number(): number {
    const m = /^-?(\d{1,15})(\.\d{1,3})?/.exec(this.s.slice(this.pos));
    if (!m || (m[2] !== undefined && m[1]!.length > 12)) throw new StructuredFieldError(`bad number at ${this.pos}`);
    this.pos += m[0].length;
    return Number(m[0]);
  }

  string(): string {
    this.pos++; // "
    let out = '';
    for (;;) {
      if (this.done) throw new StructuredFieldError('an unterminated string');
      const c = this.next();
      if (c === '\\') {
        const e = this.next();
        if (e !== '"' && e !== '\\') throw new StructuredFieldError('a bad escape in a string');
        out += e;
      } else if (c === '"') return out;
      else if (c < ' ' || c > '~') throw new StructuredFieldError('a character outside printable ASCII in a string');
      else out += c;
    }
  }

  token(): Token {
    const m = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(this.s.slice(this.pos))!;
    this.pos += m[0].length;
    return new Token(m[0]);
  }

  bytes(): Uint8Array {
    const m = /^:([A-Za-z0-9+/=]*):/.exec(this.s.slice(this.pos));
    if (!m) throw new StructuredFieldError(`bad byte sequence at ${this.pos}`);
    this.pos += m[0].length;
    return new Uint8Array(Buffer.from(m[1]!, 'base64'));
  }

  boolean(): boolean {
    const m = /^\?([01])/.exec(this.s.slice(this.pos));
    if (!m) throw new StructuredFieldError(`bad boolean at ${this.pos}`);
    this.pos += 2;
    return m[1] === '1';
  }
}

/** A bare item as RFC 8941 §4.1.3 writes it. */
export function serializeBareItem(v: BareItem): string {
  if (typeof v === 'boolean') return v ? '?1' : '?0';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  if (typeof v === 'string') return `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  if (v instanceof Token) return v.value;
  return `:${Buffer.from(v).toString('base64')}:`;
}

function serializeParams(params: Parameters): string {
  return params.map(([k, v]) => (v === true ? `;${k}` : `;${k}=${serializeBareItem(v)}`)).join('');
}

/** An inner list with its parameters, as RFC 8941 §4.1.1.1 writes it. */
export function serializeInnerList(list: InnerList): string {
  return `(${list.items.map((i) => serializeBareItem(i.value) + serializeParams(i.params)).join(' ')})${serializeParams(list.params)}`;
}
