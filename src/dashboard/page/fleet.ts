// The supervisor's page script: every call of the fleet from the dashboard's `/fleet/events`
// (the whole list on connect, then each call that changed), drawn as one table. EventSource
// reconnects by itself when the dashboard restarts, and the list comes again whole.
// Bundled for the browser by esbuild (src/dashboard/pageBundle.ts); served as /fleet.js.
import { FleetCallSchema, type FleetCall } from '../fleetView.js';
import { labelText } from '../../schema/resultLabel.js';

const calls = new Map<string, FleetCall>();
const rows = new Map<string, HTMLTableRowElement>();
let updates = 0;

const byId = (id: string): HTMLElement => document.getElementById(id)!;
function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return `${h > 0 ? `${h}:${String(m).padStart(2, '0')}` : m}:${String(r).padStart(2, '0')}`;
}

/** How long the call has run (live) or ran (ended), by the clocks of the publisher and this page. */
function duration(c: FleetCall): string {
  if (c.startedAt === null) return c.audioMs !== null ? clock(c.audioMs) : '';
  return clock((c.endedAt ?? Date.now()) - c.startedAt);
}

function statusText(c: FleetCall): string {
  if (c.stale) return 'no news';
  if (c.status === 'failed' && c.error) return `failed · ${c.error.code}`;
  return c.status === 'reconnecting' ? 'reconnecting…' : c.status;
}

function draw(c: FleetCall): void {
  let row = rows.get(c.id);
  if (!row) {
    row = el('tr', 'call');
    rows.set(c.id, row);
    byId('calls').appendChild(row);
  }
  row.dataset.id = c.id;
  row.dataset.status = c.stale ? 'stale' : c.status;
  row.dataset.ended = String(c.ended);
  row.replaceChildren();

  const name = el('td', 'name');
  const link = el('a', undefined, c.title);
  link.href = `/call?id=${encodeURIComponent(c.id)}`;
  link.target = '_blank';
  link.rel = 'noopener';
  name.appendChild(link);
  if (c.title !== c.id) name.appendChild(el('div', 'muted mono', c.id));
  // What made the call's results, in the words every view uses.
  if (c.label) {
    const source = el('div', 'source', labelText(c.label));
    source.dataset.source = c.label.source;
    name.appendChild(source);
  }
  row.appendChild(name);

  const status = el('td');
  const badge = el('span', 'session-status', statusText(c));
  badge.dataset.status = c.stale ? 'stale' : c.status;
  status.appendChild(badge);
  if (c.partial) status.appendChild(el('div', 'muted', 'from the oldest kept'));
  if (c.status === 'failed' && c.error) badge.title = c.error.message;
  row.appendChild(status);

  const time = el('td', 'duration mono', duration(c));
  time.dataset.live = String(!c.ended);
  row.appendChild(time);

  const roles = el('td', 'col-roles');
  if (c.conversationType) roles.appendChild(el('div', 'muted', c.conversationType));
  for (const r of c.roles) roles.appendChild(el('div', 'role', `${r.speaker}: ${r.role}`));
  if (c.roles.length === 0 && !c.conversationType) roles.appendChild(el('span', 'muted', '—'));
  row.appendChild(roles);

  const emotion = el('td', 'col-emotion');
  if (c.emotion) emotion.appendChild(el('span', 'chip', c.emotion.speaker ? `${c.emotion.speaker}: ${c.emotion.emotion}` : c.emotion.emotion));
  else emotion.appendChild(el('span', 'muted', '—'));
  row.appendChild(emotion);

  const behaviors = el('td', 'col-behaviors');
  for (const b of c.behaviors) behaviors.appendChild(el('span', 'chip', b.speaker ? `${b.speaker}: ${b.name}` : b.name));
  if (c.behaviorCount > c.behaviors.length) behaviors.appendChild(el('span', 'muted', `+${c.behaviorCount - c.behaviors.length}`));
  if (c.behaviorCount === 0) behaviors.appendChild(el('span', 'muted', '—'));
  row.appendChild(behaviors);
}

function summary(): void {
  let live = 0;
  for (const c of calls.values()) if (!c.ended) live++;
  byId('live-count').textContent = String(live);
  byId('ended-count').textContent = String(calls.size - live);
  byId('empty').hidden = calls.size > 0;
  updates++;
  document.body.dataset.updates = String(updates);
}

function upsert(value: unknown): void {
  const parsed = FleetCallSchema.safeParse(value);
  if (!parsed.success) return;
  calls.set(parsed.data.id, parsed.data);
  draw(parsed.data);
}

function remove(id: string): void {
  calls.delete(id);
  rows.get(id)?.remove();
  rows.delete(id);
}

function connection(state: string, text: string): void {
  const c = byId('conn');
  c.dataset.state = state;
  c.textContent = text;
}

const source = new EventSource('/fleet/events');
source.addEventListener('open', () => connection('live', 'live'));
source.addEventListener('error', () => connection('reconnecting', 'reconnecting…'));
source.addEventListener('calls', (e) => {
  const list = JSON.parse((e as MessageEvent<string>).data) as { calls: unknown[] };
  const seen = new Set<string>();
  for (const c of list.calls) {
    upsert(c);
    if (c && typeof c === 'object' && typeof (c as { id?: unknown }).id === 'string') seen.add((c as { id: string }).id);
  }
  for (const id of [...calls.keys()]) if (!seen.has(id)) remove(id);
  summary();
});
source.addEventListener('call', (e) => {
  upsert(JSON.parse((e as MessageEvent<string>).data));
  summary();
});
source.addEventListener('remove', (e) => {
  remove((JSON.parse((e as MessageEvent<string>).data) as { id: string }).id);
  summary();
});

// Live calls' durations tick between updates.
setInterval(() => {
  for (const [id, row] of rows) {
    const c = calls.get(id);
    const cell = row.querySelector<HTMLElement>('.duration');
    if (c && cell && !c.ended) cell.textContent = duration(c);
  }
}, 1000);
