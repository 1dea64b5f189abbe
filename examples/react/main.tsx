// A React page showing a live call from a relay: the session's raw events folded in the page
// with splitSession; each card reads one derived stream through useObservable. Built with
// esbuild (build.mjs). Where the relay is comes from the page's hash:
//   index.html#relay=http://127.0.0.1:8787&session=call&token=TOKEN
// (a real app gets the token from its own backend or a cookie, never from a link it shares).
import { StrictMode, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { OrderedMap, relayEvents, relaySessionUrl, splitSession, type ParticipantRolePick, type TopicSentiment, type TranscriptEntry } from 'svc-stream/browser';
import { useObservable } from './useObservable.js';

const params = new URLSearchParams(location.hash.slice(1));
const relay = params.get('relay') ?? location.origin;
const session = params.get('session') ?? 'call';
const token = params.get('token') ?? undefined;
const maxRetries = Number(params.get('retries') ?? 10);

function Call() {
  const [status, setStatus] = useState('connecting');
  const [gap, setGap] = useState<string | undefined>(undefined);
  // One relay connection and one fold for the page's life (StrictMode mounts twice: the
  // streams are cold, so the first mount's subscriptions are torn down with it).
  const streams = useMemo(
    () =>
      splitSession(
        relayEvents(relaySessionUrl(relay, session), {
          token,
          maxRetries,
          onStatus: setStatus,
          onGap: (g) => setGap(`${g.missed} events were missed; reload to refold`),
        }),
      ),
    [],
  );
  const transcript = useObservable(streams.liveTranscript$, OrderedMap.empty<TranscriptEntry>());
  const roles = useObservable(streams.currentRoles$, OrderedMap.empty<ParticipantRolePick>()).value;
  const topics = useObservable(streams.latestTopics$, [] as readonly string[]).value;
  const sentiments = useObservable(streams.topicSentiments$, OrderedMap.empty<TopicSentiment>()).value;
  // Every derived stream ends as the relayed events do: the transcript's end is the session's.
  const shown = transcript.error ? 'error' : transcript.done ? 'done' : status;
  const failure = transcript.error as { code?: string; message?: string } | undefined;

  return (
    <>
      <header>
        <h1>Live call · React</h1>
        <span id="status" data-status={shown}>{shown === 'reconnecting' ? 'reconnecting…' : shown}</span>
      </header>
      {failure || gap ? <p id="error" role="alert">{failure ? `${failure.code ?? 'error'}: ${failure.message ?? ''}` : `relay_gap: ${gap}`}</p> : null}
      <main>
        <section>
          <h2>Transcript</h2>
          <ol id="transcript">
            {transcript.value.toArray().map((line) => (
              <li key={line.clip.clip_uuid} data-status={line.status} data-speaker={line.clip.speaker_label ?? ''}>
                <span className="who">Speaker {line.clip.speaker_label ?? '?'}</span>
                <span data-text="">{line.clip.text ?? '…'}</span>
              </li>
            ))}
          </ol>
        </section>
        <aside>
          <section>
            <h2>Roles</h2>
            <ul id="roles">
              {roles.toArray().map((r) => (
                <li key={r.speaker_label} data-speaker={r.speaker_label}>{`Speaker ${r.speaker_label}: ${r.name ?? r.participant_role_uuid ?? 'assigned'}`}</li>
              ))}
            </ul>
          </section>
          <section>
            <h2>Topics</h2>
            <ul id="topics">
              {topics.map((t) => (
                <li key={t} data-topic={t}>{t}</li>
              ))}
            </ul>
          </section>
          <section>
            <h2>Sentiment</h2>
            <ul id="sentiment">
              {sentiments.toArray().map((s) => (
                <li key={`${s.topic}|${s.speaker_label}`} data-topic={s.topic} data-speaker={s.speaker_label}>
                  {`${s.topic} · Speaker ${s.speaker_label}`}
                  <span className={`score ${s.sentiment_score < 0 ? 'neg' : 'pos'}`} data-score={String(s.sentiment_score)}>
                    {(s.sentiment_score > 0 ? '+' : '') + s.sentiment_score.toFixed(2)}
                  </span>
                </li>
              ))}
            </ul>
          </section>
        </aside>
      </main>
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Call />
  </StrictMode>,
);
