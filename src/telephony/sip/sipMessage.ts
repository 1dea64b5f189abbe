// SIP messages (RFC 3261 §7, §25) read strictly and written plainly: a request or a response,
// bounded in size, line length and header count, every refusal a typed reason the server counts.

/** Why a datagram or a stream's bytes were not taken as a SIP message (each counted by the server). */
export type SipRefusalReason =
  /** Over `maxMessageBytes` (a datagram, or a TCP message's head and body). */
  | 'too_large'
  /** A line over `maxLineLength`. */
  | 'line_too_long'
  /** More than `maxHeaders` header fields. */
  | 'too_many_headers'
  /** Not a SIP start line: the method, the Request-URI (spaces, `<…>`), the status code. */
  | 'bad_start_line'
  /** A SIP version other than 2.0 (answered 505 where it is a request). */
  | 'unsupported_version'
  /** A header line without a name and a colon, or bytes that are not text. */
  | 'bad_header'
  /** Via, From, To, Call-ID or CSeq missing, or more than one of a single-valued one. */
  | 'missing_header'
  /** CSeq not a number under 2³¹ and a method, or its method not the request's. */
  | 'bad_cseq'
  /** Max-Forwards not a number 0–255. */
  | 'bad_max_forwards'
  /** Content-Length not a number, negative, over the bytes that came, or twice with two values. */
  | 'bad_content_length'
  /** A Via without `SIP/2.0/transport host`. */
  | 'bad_via'
  /** From or To without a URI, or with an unbalanced quote or bracket. */
  | 'bad_address';

/** A message that could not be read, and why. */
export class SipParseError extends Error {
  override readonly name = 'SipParseError';
  constructor(
    readonly reason: SipRefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** Bounds on what the reader takes. */
export interface SipLimits {
  /** Largest message, head and body, bytes (default 65 535: the largest UDP datagram). */
  readonly maxMessageBytes: number;
  /** Longest line of the head, bytes (default 8 192). */
  readonly maxLineLength: number;
  /** Most header fields (default 100). */
  readonly maxHeaders: number;
}

export const DEFAULT_SIP_LIMITS: SipLimits = { maxMessageBytes: 65_535, maxLineLength: 8_192, maxHeaders: 100 };

/** Compact forms (RFC 3261 §7.3.3, and the registry's later ones) to their full names, lower case. */
const COMPACT: Readonly<Record<string, string>> = {
  i: 'call-id',
  m: 'contact',
  e: 'content-encoding',
  l: 'content-length',
  c: 'content-type',
  f: 'from',
  s: 'subject',
  k: 'supported',
  t: 'to',
  v: 'via',
  o: 'event',
  r: 'refer-to',
  b: 'referred-by',
  u: 'allow-events',
  x: 'session-expires',
};

/** The headers of a message, by lower-case full name, in the order they came. */
export class SipHeaders {
  private readonly fields = new Map<string, string[]>();
  /** Header fields read (a comma list in one field counts once). */
  count = 0;

  /** The first value of `name` (any case, compact or full). */
  get(name: string): string | undefined {
    return this.fields.get(canonical(name))?.[0];
  }

  /** Every field of `name`, each as it came (a comma list stays one string). */
  all(name: string): readonly string[] {
    return this.fields.get(canonical(name)) ?? [];
  }

  /** Every value of a list header (Via, Route, Record-Route, Contact, Supported, Require, Allow): fields split at commas outside quotes and brackets. */
  list(name: string): string[] {
    const out: string[] = [];
    for (const f of this.all(name)) out.push(...splitList(f));
    return out;
  }

  has(name: string): boolean {
    return this.fields.has(canonical(name));
  }

  add(name: string, value: string): void {
    const key = canonical(name);
    const list = this.fields.get(key);
    if (list) list.push(value);
    else this.fields.set(key, [value]);
    this.count++;
  }
}

function canonical(name: string): string {
  const lower = name.toLowerCase();
  return COMPACT[lower] ?? lower;
}

interface SipMessageBase {
  readonly headers: SipHeaders;
  readonly body: Buffer;
  readonly callId: string;
  readonly cseq: { readonly seq: number; readonly method: string };
  readonly from: NameAddr;
  readonly to: NameAddr;
  /** The topmost Via. */
  readonly via: Via;
}

export interface SipRequest extends SipMessageBase {
  readonly kind: 'request';
  readonly method: string;
  readonly uri: string;
}

export interface SipResponse extends SipMessageBase {
  readonly kind: 'response';
  readonly status: number;
  readonly reason: string;
}

export type SipMessage = SipRequest | SipResponse;

/** `"Display" <uri>;params` or `uri;params` (RFC 3261 §20.10, §25.1 name-addr / addr-spec). */
export interface NameAddr {
  readonly displayName: string | undefined;
  readonly uri: string;
  /** Header parameters (after the `>`, or after the URI of a bare addr-spec), names lower case. */
  readonly params: Readonly<Record<string, string>>;
}

/** One Via value: `SIP/2.0/UDP host:port;branch=…`. */
export interface Via {
  readonly transport: string;
  readonly host: string;
  readonly port: number | undefined;
  readonly params: Readonly<Record<string, string>>;
  /** The value as it came (copied into responses unchanged). */
  readonly raw: string;
}

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const CRLF = Buffer.from('\r\n\r\n');

/**
 * Where a message's head ends in `buf` (the index after the blank line), or -1. Leading CRLFs
 * (keep-alives, RFC 5626) are the caller's to skip.
 */
export function headEnd(buf: Buffer, from = 0): number {
  const i = buf.indexOf(CRLF, from);
  return i < 0 ? -1 : i + 4;
}

/**
 * Read one message from `bytes`: a datagram (`stream: false`, the body is what follows the
 * head, cut to Content-Length), or a stream's message whose head and whole body are in `bytes`
 * (`stream: true`, Content-Length required). Throws {@link SipParseError}.
 */
export function parseSipMessage(bytes: Buffer, limits: SipLimits = DEFAULT_SIP_LIMITS, stream = false): SipMessage {
  if (bytes.length > limits.maxMessageBytes) throw new SipParseError('too_large', `message of ${bytes.length} bytes is over ${limits.maxMessageBytes}`);
  const end = headEnd(bytes);
  if (end < 0) throw new SipParseError('bad_header', 'no blank line ends the head');
  const head = bytes.toString('utf8', 0, end - 4);
  const lines = head.split('\r\n');
  for (const l of lines) if (l.length > limits.maxLineLength) throw new SipParseError('line_too_long', `a line of ${l.length} bytes is over ${limits.maxLineLength}`);
  const startLine = readStartLine(lines[0]!);
  const headers = new SipHeaders();
  let current: [string, string] | undefined;
  const flush = (): void => {
    if (!current) return;
    if (headers.count >= limits.maxHeaders) throw new SipParseError('too_many_headers', `more than ${limits.maxHeaders} header fields`);
    headers.add(current[0], current[1].trim());
    current = undefined;
  };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith(' ') || line.startsWith('\t')) {
      // Folding (LWS): the line continues the one before, its leading white space one space.
      if (!current) throw new SipParseError('bad_header', 'a continuation line before any header');
      current[1] += ` ${line.trim()}`;
      continue;
    }
    flush();
    const colon = line.indexOf(':');
    if (colon <= 0) throw new SipParseError('bad_header', `header line without a name and a colon: ${clip(line)}`);
    const name = line.slice(0, colon).replace(/[ \t]+$/, '');
    if (!TOKEN.test(name)) throw new SipParseError('bad_header', `bad header name: ${clip(name)}`);
    current = [name, line.slice(colon + 1)];
  }
  flush();

  const common = readCommon(headers);
  if (startLine.kind === 'response') {
    const body = readBody(bytes, end, headers, stream);
    return { ...startLine, headers, body, ...common };
  }
  const { method } = startLine;
  // ACK and CANCEL carry their own method too (RFC 3261 §17.1.1.3, §9.1).
  if (common.cseq.method !== method) throw new SipParseError('bad_cseq', `CSeq method ${common.cseq.method} is not the request's ${method}`);
  const mf = headers.all('max-forwards');
  if (mf.length > 1 || (mf[0] !== undefined && !(/^\d{1,10}$/.test(mf[0]) && Number(mf[0]) <= 255))) throw new SipParseError('bad_max_forwards', `bad Max-Forwards: ${clip(mf.join(', '))}`);
  const body = readBody(bytes, end, headers, stream);
  return { ...startLine, headers, body, ...common };
}

type StartLine = { readonly kind: 'request'; readonly method: string; readonly uri: string } | { readonly kind: 'response'; readonly status: number; readonly reason: string };

function readStartLine(start: string): StartLine {
  if (start.startsWith('SIP/')) {
    const m = /^SIP\/(\d+\.\d+) (\d{3}) (.*)$/.exec(start) ?? /^SIP\/(\d+\.\d+) (\d{3})$/.exec(start);
    if (!m) throw new SipParseError('bad_start_line', `bad status line: ${clip(start)}`);
    if (m[1] !== '2.0') throw new SipParseError('unsupported_version', `SIP/${m[1]} is not SIP/2.0`);
    const status = Number(m[2]);
    if (status < 100) throw new SipParseError('bad_start_line', `status ${status} is under 100`);
    return { kind: 'response', status, reason: m[3] ?? '' };
  }
  const parts = start.split(' ');
  if (parts.length !== 3) throw new SipParseError('bad_start_line', `a request line is three words apart by single spaces: ${clip(start)}`);
  const [method, uri, version] = parts as [string, string, string];
  if (!TOKEN.test(method)) throw new SipParseError('bad_start_line', `bad method: ${clip(method)}`);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>]+$/.test(uri)) throw new SipParseError('bad_start_line', `bad Request-URI: ${clip(uri)}`);
  // A SIP Request-URI carries no headers (RFC 3261 §19.1.5): a `?` after the host part is refused.
  if (/^sips?:/i.test(uri) && uri.slice(uri.lastIndexOf('@') + 1).includes('?')) throw new SipParseError('bad_start_line', `a Request-URI with headers: ${clip(uri)}`);
  if (!/^SIP\/\d+\.\d+$/.test(version)) throw new SipParseError('bad_start_line', `bad version: ${clip(version)}`);
  if (version !== 'SIP/2.0') throw new SipParseError('unsupported_version', `${version} is not SIP/2.0`);
  return { kind: 'request', method, uri };
}

function readCommon(headers: SipHeaders): Pick<SipMessageBase, 'callId' | 'cseq' | 'from' | 'to' | 'via'> {
  const single = (name: string): string => {
    const all = headers.all(name);
    if (all.length !== 1) throw new SipParseError('missing_header', all.length === 0 ? `no ${name} header` : `${all.length} ${name} headers`);
    return all[0]!;
  };
  const callId = single('call-id');
  if (callId === '' || /\s/.test(callId)) throw new SipParseError('missing_header', 'Call-ID is empty or has white space');
  const cseqRaw = single('cseq');
  const c = /^0*(\d{1,10})[ \t]+([^\s]+)$/.exec(cseqRaw);
  if (!c || Number(c[1]) >= 2 ** 31 || !TOKEN.test(c[2]!)) throw new SipParseError('bad_cseq', `bad CSeq: ${clip(cseqRaw)}`);
  const from = parseNameAddr(single('from'));
  const to = parseNameAddr(single('to'));
  const vias = headers.list('via');
  if (vias.length === 0) throw new SipParseError('missing_header', 'no Via header');
  // Every Via is read (a bad one further down is a bad message, RFC 4475 §3.1.2.1), the topmost kept.
  const parsed = vias.map(parseVia);
  return { callId, cseq: { seq: Number(c[1]), method: c[2]! }, from, to, via: parsed[0]! };
}

function readBody(bytes: Buffer, headEndAt: number, headers: SipHeaders, stream: boolean): Buffer {
  const values = headers.all('content-length');
  const distinct = new Set(values.map((v) => v.trim()));
  if (distinct.size > 1) throw new SipParseError('bad_content_length', `Content-Length given twice: ${values.join(', ')}`);
  const raw = values[0];
  const rest = bytes.length - headEndAt;
  if (raw === undefined) {
    if (stream) throw new SipParseError('bad_content_length', 'no Content-Length on a stream transport');
    return bytes.subarray(headEndAt);
  }
  if (!/^\d{1,9}$/.test(raw)) throw new SipParseError('bad_content_length', `bad Content-Length: ${clip(raw)}`);
  const length = Number(raw);
  if (length > rest) throw new SipParseError('bad_content_length', `Content-Length ${length} is over the ${rest} bytes that came`);
  return bytes.subarray(headEndAt, headEndAt + length);
}

/** Split a header value at commas outside quotes and `<…>`. */
export function splitList(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let from = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === '<') depth++;
    else if (ch === '>') depth = Math.max(0, depth - 1);
    else if (ch === ',' && depth === 0) {
      const part = value.slice(from, i).trim();
      if (part !== '') out.push(part);
      from = i + 1;
    }
  }
  const last = value.slice(from).trim();
  if (last !== '') out.push(last);
  return out;
}

/** `;a=b;c` into `{ a: 'b', c: '' }`, names lower case, white space around `;` and `=` dropped. */
export function parseParams(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const part of text.split(';')) {
    const p = part.trim();
    if (p === '') continue;
    const eq = p.indexOf('=');
    const name = (eq < 0 ? p : p.slice(0, eq)).trim().toLowerCase();
    let value = eq < 0 ? '' : p.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (name !== '') params[name] = value;
  }
  return params;
}

/** Read a From, To or Contact value. Throws `bad_address`. */
export function parseNameAddr(value: string): NameAddr {
  const v = value.trim();
  let i = 0;
  let display: string | undefined;
  if (v.startsWith('"')) {
    i = 1;
    let name = '';
    for (; i < v.length; i++) {
      const ch = v[i]!;
      if (ch === '\\' && i + 1 < v.length) {
        name += v[++i];
        continue;
      }
      if (ch === '"') break;
      name += ch;
    }
    if (i >= v.length) throw new SipParseError('bad_address', `unbalanced quote in ${clip(v)}`);
    display = name;
    i++;
  }
  const lt = v.indexOf('<', i);
  if (lt >= 0) {
    if (display === undefined) {
      const words = v.slice(0, lt).trim();
      // An unquoted display name is tokens apart by white space (RFC 3261 §25.1): `Bell, Alexander` needs quotes.
      if (words !== '' && !words.split(/\s+/).every((w) => TOKEN.test(w))) throw new SipParseError('bad_address', `an unquoted display name that is not tokens in ${clip(v)}`);
      display = words === '' ? undefined : words.replace(/\s+/g, ' ');
    } else if (v.slice(i, lt).trim() !== '') throw new SipParseError('bad_address', `text between the quoted name and < in ${clip(v)}`);
    const gt = v.indexOf('>', lt);
    if (gt < 0) throw new SipParseError('bad_address', `unbalanced < in ${clip(v)}`);
    const uri = v.slice(lt + 1, gt);
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(uri)) throw new SipParseError('bad_address', `bad URI in ${clip(v)}`);
    return { displayName: display, uri, params: parseParams(v.slice(gt + 1)) };
  }
  if (display !== undefined) throw new SipParseError('bad_address', `a quoted name without <uri> in ${clip(v)}`);
  // addr-spec: the URI ends at the first `;` (its own parameters would need the brackets) or white space.
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:[^;\s]+)\s*(.*)$/.exec(v);
  if (!m) throw new SipParseError('bad_address', `no URI in ${clip(v)}`);
  return { displayName: undefined, uri: m[1]!, params: parseParams(m[2]!) };
}

/** Read one Via value. Throws `bad_via`. */
export function parseVia(value: string): Via {
  const semi = value.indexOf(';');
  const sent = (semi < 0 ? value : value.slice(0, semi)).replace(/\s*\/\s*/g, '/').trim();
  const m = /^SIP\/2\.0\/([A-Za-z0-9\-.!%*_+`'~]+)\s+(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-.]+)(?:\s*:\s*(\d{1,5}))?$/.exec(sent);
  if (!m) throw new SipParseError('bad_via', `bad Via: ${clip(value)}`);
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port === 0 || port > 65535)) throw new SipParseError('bad_via', `bad Via port: ${clip(value)}`);
  return { transport: m[1]!.toUpperCase(), host: m[2]!, port, params: semi < 0 ? {} : parseParams(value.slice(semi)), raw: value.trim() };
}

/** The host and port of a `sip:` or `sips:` URI (for sending a request to a Contact or a Route). */
export function uriHostPort(uri: string): { host: string; port: number | undefined; transport: string | undefined } | undefined {
  const m = /^sips?:(?:[^@;?]*@)?(\[[0-9A-Fa-f:.]+\]|[^:;?>]+)(?::(\d{1,5}))?([^?>]*)/i.exec(uri.trim());
  if (!m) return undefined;
  const params = parseParams(m[3] ?? '');
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] === undefined ? undefined : Number(m[2]), transport: params['transport']?.toLowerCase() };
}

function clip(s: string): string {
  return s.length > 120 ? `${s.slice(0, 120)}…` : s;
}

/** Reason phrases of the statuses this server sends. */
export const REASONS: Readonly<Record<number, string>> = {
  100: 'Trying',
  180: 'Ringing',
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  420: 'Bad Extension',
  481: 'Call/Transaction Does Not Exist',
  482: 'Loop Detected',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  491: 'Request Pending',
  500: 'Server Internal Error',
  503: 'Service Unavailable',
  505: 'Version Not Supported',
};

/** Extra header fields of a message this server writes, in order. */
export type HeaderList = ReadonlyArray<readonly [string, string]>;

/**
 * A response to `req` (RFC 3261 §8.2.6): its Vias, From, Call-ID and CSeq copied, To with
 * `toTag` added when it has none, then `extra`, Content-Length last.
 */
export function writeResponse(req: SipRequest, status: number, extra: HeaderList = [], body?: { readonly type: string; readonly bytes: Buffer }, toTag?: string): Buffer {
  const lines = [`SIP/2.0 ${status} ${REASONS[status] ?? 'Unknown'}`];
  for (const v of req.headers.list('via')) lines.push(`Via: ${v}`);
  lines.push(`From: ${req.headers.get('from')}`);
  const to = req.headers.get('to')!;
  lines.push(`To: ${toTag !== undefined && req.to.params['tag'] === undefined && status > 100 ? `${to};tag=${toTag}` : to}`);
  lines.push(`Call-ID: ${req.callId}`, `CSeq: ${req.cseq.seq} ${req.cseq.method}`);
  return finish(lines, extra, body);
}

/** A request of ours (a BYE in a dialog): the start line, then `headers` in order, Content-Length last. */
export function writeRequest(method: string, uri: string, headers: HeaderList, body?: { readonly type: string; readonly bytes: Buffer }): Buffer {
  return finish([`${method} ${uri} SIP/2.0`], headers, body);
}

function finish(lines: string[], extra: HeaderList, body: { readonly type: string; readonly bytes: Buffer } | undefined): Buffer {
  for (const [n, v] of extra) lines.push(`${n}: ${v}`);
  if (body) lines.push(`Content-Type: ${body.type}`);
  lines.push(`Content-Length: ${body ? body.bytes.length : 0}`, '', '');
  const head = Buffer.from(lines.join('\r\n'));
  return body ? Buffer.concat([head, body.bytes]) : head;
}
