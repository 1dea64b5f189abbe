// SIPREC (RFC 7866): a recording INVITE's multipart/mixed body split into its SDP and its
// rs-metadata (RFC 7865), and the metadata read with a small bounded XML reader: no DTD, no
// entity but the five predefined and character references, so nothing expands or reaches out.

/** One participant of a recorded call. */
export interface SiprecParticipant {
  /** `participant_id` in the metadata. */
  readonly id: string;
  /** Its `<name>` (display name), when given. */
  readonly name: string | undefined;
  /** Its address of record (`<nameID aor="…">`), when given. */
  readonly aor: string | undefined;
  /** The stream ids it sends (`<send>`). */
  readonly sends: readonly string[];
}

/** One recorded stream: its id and the SDP `a=label` it is. */
export interface SiprecStream {
  readonly id: string;
  readonly label: string;
}

/** What a recording session's metadata says (RFC 7865 §6). */
export interface SiprecMetadata {
  /** `<session session_id>`: the communication session recorded. */
  readonly sessionId: string | undefined;
  /** `<group group_id>`, when given. */
  readonly groupId: string | undefined;
  /** The recorded call's SIP Call-IDs (`<sipSessionID>`, `<session><sipSessionID>`), when given. */
  readonly sipSessionIds: readonly string[];
  readonly participants: readonly SiprecParticipant[];
  readonly streams: readonly SiprecStream[];
}

/** One part of a multipart body. */
export interface BodyPart {
  readonly type: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** Why a SIPREC body was refused (answered 400 or 415). */
export class SiprecError extends Error {
  override readonly name = 'SiprecError';
}

/** Most parts a multipart body may have. */
const MAX_PARTS = 8;

/** Split a `multipart/mixed; boundary=…` body into its parts (RFC 2046 §5.1). Throws {@link SiprecError}. */
export function splitMultipart(contentType: string, body: Buffer): BodyPart[] {
  const m = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary || boundary.length > 70) throw new SiprecError('multipart body without a boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: BodyPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw new SiprecError('multipart body without its first boundary');
  for (;;) {
    let start = at + delimiter.length;
    if (body[start] === 0x2d && body[start + 1] === 0x2d) break; // `--boundary--`: the end
    // The rest of the boundary line (transport padding), then CRLF.
    const eol = body.indexOf('\r\n', start);
    if (eol < 0) throw new SiprecError('multipart boundary line without CRLF');
    start = eol + 2;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), start);
    if (next < 0) throw new SiprecError('multipart part without a closing boundary');
    if (parts.length >= MAX_PARTS) throw new SiprecError(`more than ${MAX_PARTS} parts`);
    parts.push(readPart(body.subarray(start, next)));
    at = next + 2;
  }
  return parts;
}

function readPart(bytes: Buffer): BodyPart {
  const end = bytes.indexOf('\r\n\r\n');
  const headText = end < 0 ? (bytes.indexOf('\r\n') === 0 ? '' : bytes.toString('utf8')) : bytes.toString('utf8', 0, end);
  const headers: Record<string, string> = {};
  for (const line of headText.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = end < 0 ? Buffer.alloc(0) : bytes.subarray(end + 4);
  return { type: (headers['content-type'] ?? 'text/plain').split(';')[0]!.trim().toLowerCase(), headers, body };
}

/** An element of the small XML reader: name without its prefix, attributes, children, text. */
export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  text: string;
}

/** Bounds of the XML reader. */
export interface XmlLimits {
  readonly maxBytes: number;
  readonly maxElements: number;
  readonly maxDepth: number;
}

const XML_LIMITS: XmlLimits = { maxBytes: 64 * 1024, maxElements: 2000, maxDepth: 16 };

const PREDEFINED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeText(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]+);/g, (all, ref: string) => {
    if (ref.startsWith('#x')) return safeChar(parseInt(ref.slice(2), 16), all);
    if (ref.startsWith('#')) return safeChar(parseInt(ref.slice(1), 10), all);
    const v = PREDEFINED[ref];
    if (v === undefined) throw new SiprecError(`XML entity &${ref}; is not one of the five predefined (no DTD is read)`);
    return v;
  });
}

function safeChar(code: number, all: string): string {
  if (code > 0x10ffff || code === 0) throw new SiprecError(`bad character reference ${all}`);
  return String.fromCodePoint(code);
}

const localName = (qname: string): string => qname.slice(qname.indexOf(':') + 1);

/**
 * Read an XML document into elements. Bounded (`maxBytes`, `maxElements`, `maxDepth`); a
 * DOCTYPE, an ENTITY or any entity but the five predefined is refused (no expansion, no
 * external reference). Throws {@link SiprecError}.
 */
export function readXml(text: string, limits: XmlLimits = XML_LIMITS): XmlElement {
  if (text.length > limits.maxBytes) throw new SiprecError(`metadata of ${text.length} bytes is over ${limits.maxBytes}`);
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new SiprecError('metadata with a DOCTYPE or ENTITY declaration is refused');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let elements = 0;
  const re = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[([\s\S]*?)\]\]>|<\/([A-Za-z_][\w.:-]*)\s*>|<([A-Za-z_][\w.:-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|([^<]+)|(<)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    if (m[7] !== undefined) throw new SiprecError(`malformed XML near offset ${m.index}`);
    const top = stack[stack.length - 1];
    if (m[6] !== undefined) {
      if (top) top.text += decodeText(m[6]);
      else if (m[6].trim() !== '') throw new SiprecError('text outside the root element');
      continue;
    }
    if (m[1] !== undefined) {
      if (top) top.text += m[1];
      continue;
    }
    if (m[2] !== undefined) {
      const closed = stack.pop();
      if (!closed || closed.name !== localName(m[2])) throw new SiprecError(`unbalanced </${m[2]}>`);
      continue;
    }
    if (m[3] !== undefined) {
      if (++elements > limits.maxElements) throw new SiprecError(`more than ${limits.maxElements} elements`);
      if (stack.length >= limits.maxDepth) throw new SiprecError(`nested deeper than ${limits.maxDepth}`);
      const attributes: Record<string, string> = {};
      const attrRe = /([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/g;
      let a: RegExpExecArray | null;
      while ((a = attrRe.exec(m[4] ?? '')) !== null) attributes[localName(a[1]!)] = decodeText(a[2] ?? a[3] ?? '');
      const el: XmlElement = { name: localName(m[3]), attributes, children: [], text: '' };
      if (top) top.children.push(el);
      else if (root) throw new SiprecError('more than one root element');
      else root = el;
      if (m[5] !== '/') stack.push(el);
    }
  }
  if (!root || stack.length > 0) throw new SiprecError('XML document not closed');
  return root;
}

function* walk(el: XmlElement): Generator<XmlElement> {
  yield el;
  for (const c of el.children) yield* walk(c);
}

const child = (el: XmlElement, name: string): XmlElement | undefined => el.children.find((c) => c.name === name);

/** Read RFC 7865 metadata (`<recording xmlns="urn:ietf:params:xml:ns:recording:1">`). Throws {@link SiprecError}. */
export function readSiprecMetadata(xml: string): SiprecMetadata {
  const root = readXml(xml);
  if (root.name !== 'recording') throw new SiprecError(`metadata root is <${root.name}>, not <recording>`);
  const participants = new Map<string, { id: string; name: string | undefined; aor: string | undefined; sends: string[] }>();
  const streams: SiprecStream[] = [];
  let sessionId: string | undefined;
  let groupId: string | undefined;
  const sipSessionIds: string[] = [];
  const participant = (id: string) => {
    let p = participants.get(id);
    if (!p) {
      p = { id, name: undefined, aor: undefined, sends: [] };
      participants.set(id, p);
    }
    return p;
  };
  for (const el of walk(root)) {
    switch (el.name) {
      case 'group':
        groupId ??= el.attributes['group_id'];
        break;
      case 'session':
        sessionId ??= el.attributes['session_id'];
        break;
      case 'sipSessionID':
        if (el.text.trim() !== '') sipSessionIds.push(el.text.trim());
        break;
      case 'participant': {
        const id = el.attributes['participant_id'];
        if (id === undefined) break;
        const p = participant(id);
        const nameId = child(el, 'nameID');
        const aor = nameId?.attributes['aor'] ?? child(el, 'aor')?.text.trim();
        if (aor) p.aor = aor;
        const name = (nameId && child(nameId, 'name')?.text.trim()) || child(el, 'name')?.text.trim();
        if (name) p.name = name;
        // RFC 7865's older form: <send> inside the participant.
        for (const c of el.children) if (c.name === 'send' && c.text.trim()) p.sends.push(c.text.trim());
        break;
      }
      case 'participantstreamassoc': {
        const id = el.attributes['participant_id'];
        if (id === undefined) break;
        const p = participant(id);
        for (const c of el.children) if (c.name === 'send' && c.text.trim() && !p.sends.includes(c.text.trim())) p.sends.push(c.text.trim());
        break;
      }
      case 'stream': {
        const id = el.attributes['stream_id'];
        const label = child(el, 'label')?.text.trim();
        if (id !== undefined && label) streams.push({ id, label });
        break;
      }
    }
  }
  return { sessionId, groupId, sipSessionIds, participants: [...participants.values()], streams };
}

/** The participant who sends the stream with SDP label `label`, if the metadata says. */
export function senderOf(metadata: SiprecMetadata, label: string): SiprecParticipant | undefined {
  const stream = metadata.streams.find((s) => s.label === label);
  if (!stream) return undefined;
  return metadata.participants.find((p) => p.sends.includes(stream.id));
}
