// A plain page (no framework) showing a live call from a relay: the session's raw events
// folded in the page with splitSession, each derived stream drawn into its own list.
// Built with esbuild (build.mjs). Where the relay is comes from the page's hash:
//   index.html#relay=http://127.0.0.1:8787&session=call&token=TOKEN
// (a real app gets the token from its own backend or a cookie, never from a link it shares).
import { relayEvents, relaySessionUrl, splitSession, type ServerEvent } from 'svc-stream/browser';

const params = new URLSearchParams(location.hash.slice(1));
const relay = params.get('relay') ?? location.origin;
const session = params.get('session') ?? 'call';
const token = params.get('token') ?? undefined;

const byId = (id: string): HTMLElement => document.getElementById(id)!;
function item(tag: string, text: string, data: Record<string, string> = {}): HTMLElement {
  const el = document.createElement(tag);
  el.textContent = text; // text from the service is never markup
  Object.assign(el.dataset, data);
  return el;
}
function setStatus(status: string): void {
  byId('status').dataset.status = status;
  byId('status').textContent = status === 'reconnecting' ? 'reconnecting…' : status;
}

let events = 0;
const events$ = relayEvents(relaySessionUrl(relay, session), {
  token,
  maxRetries: Number(params.get('retries') ?? 10),
  onStatus: setStatus,
  // A gap means the relay no longer held some events: say so rather than show a wrong state.
  onGap: (gap) => showError('relay_gap', `${gap.missed} events were missed; reload to refold`),
});
const streams = splitSession(events$);

function showError(code: string, message: string): void {
  byId('error').hidden = false;
  byId('error').textContent = `${code}: ${message}`;
}

streams.events$.subscribe({
  next: (_: ServerEvent) => (document.body.dataset.events = String(++events)),
  complete: () => setStatus('done'),
  error: (err: { code?: string; message?: string }) => {
    setStatus('error');
    showError(err.code ?? 'error', err.message ?? String(err));
  },
});
// Every derived stream errors as events$ does (reported above); each draws its own part.
const ignore = { error: () => undefined };

streams.liveTranscript$.subscribe({
  ...ignore,
  next: (lines) => {
    byId('transcript').replaceChildren(
      ...lines.toArray().map((line) => {
        const li = item('li', '', { status: line.status, speaker: line.clip.speaker_label ?? '' });
        const who = item('span', `Speaker ${line.clip.speaker_label ?? '?'}`);
        who.className = 'who';
        li.append(who, item('span', line.clip.text ?? '…', { text: '' }));
        return li;
      }),
    );
  },
});
streams.currentRoles$.subscribe({
  ...ignore,
  next: (roles) => byId('roles').replaceChildren(...roles.toArray().map((r) => item('li', `Speaker ${r.speaker_label}: ${r.name ?? r.participant_role_uuid ?? 'assigned'}`, { speaker: r.speaker_label }))),
});
streams.latestTopics$.subscribe({ ...ignore, next: (topics) => byId('topics').replaceChildren(...topics.map((t) => item('li', t, { topic: t }))) });
streams.topicSentiments$.subscribe({
  ...ignore,
  next: (sentiments) =>
    byId('sentiment').replaceChildren(
      ...sentiments.toArray().map((s) => {
        const li = item('li', `${s.topic} · Speaker ${s.speaker_label}`, { topic: s.topic, speaker: s.speaker_label });
        const score = item('span', (s.sentiment_score > 0 ? '+' : '') + s.sentiment_score.toFixed(2), { score: String(s.sentiment_score) });
        score.className = `score ${s.sentiment_score < 0 ? 'neg' : 'pos'}`;
        li.append(score);
        return li;
      }),
    ),
});
