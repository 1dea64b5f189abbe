// The dashboard page: HTML, styles and script as strings (tsc emits only .ts, so the page
// ships inside the compiled module). No library, no CDN: the script builds every node with
// textContent, so transcript text and names from the service are never parsed as markup.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc-stream dashboard</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body data-phase="loading" data-states="0">
<header class="top">
  <div class="brand"><span class="logo" aria-hidden="true"></span><span>svc-stream</span><span class="sub">live analysis</span></div>
  <div class="title" id="title"></div>
  <div class="meta"><span id="audio-pos">0:00.0</span> audio<span class="sep">·</span><span id="event-count">0</span> events</div>
  <span id="conn" class="conn" data-state="connecting">connecting</span>
  <span id="phase" class="phase" data-phase="connecting">connecting</span>
</header>
<div id="error" class="error" role="alert" hidden></div>
<div id="note" class="note" role="status" hidden></div>
<main class="grid">
  <section class="card transcript-card" aria-labelledby="h-transcript">
    <div class="card-head"><h2 id="h-transcript">Transcript</h2><span class="muted" id="clip-count"></span></div>
    <div class="scroll" id="transcript-scroll">
      <ol id="transcript" class="transcript" aria-live="polite"></ol>
      <p id="transcript-empty" class="empty">Waiting for speech…</p>
    </div>
  </section>
  <div class="side">
    <section class="card" aria-labelledby="h-conv">
      <div class="card-head"><h2 id="h-conv">Conversation</h2><span class="muted" id="conv-source"></span></div>
      <div class="conv-type" id="conv-type"></div>
      <ul id="roles" class="roles"></ul>
    </section>
    <section class="card" aria-labelledby="h-topics">
      <div class="card-head"><h2 id="h-topics">Topics</h2></div>
      <ul id="topics" class="chips"></ul>
    </section>
    <section class="card" aria-labelledby="h-sent">
      <div class="card-head"><h2 id="h-sent">Topic sentiment</h2><span class="muted">per speaker, −1 to +1</span></div>
      <div id="sentiment" class="sentiment"></div>
    </section>
    <section class="card" aria-labelledby="h-beh">
      <div class="card-head"><h2 id="h-beh">Behaviors</h2><span class="muted" id="behavior-count"></span></div>
      <ul id="behaviors" class="behaviors"></ul>
    </section>
    <section class="card" aria-labelledby="h-sum">
      <div class="card-head"><h2 id="h-sum">Summary</h2></div>
      <p id="summary" class="summary"></p>
    </section>
  </div>
</main>
</body>
</html>
`;

export const PAGE_CSS = `:root {
  --bg: #f3f5f9; --card: #fff; --ink: #0f172a; --muted: #64748b; --line: #e5e9f0; --soft: #f8fafc;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink);
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); font-size: 14px; line-height: 1.45; }
.top { position: sticky; top: 0; z-index: 2; display: flex; align-items: center; gap: 18px; padding: 12px 24px; background: #0f172a; color: #e2e8f0; box-shadow: 0 1px 0 rgba(255,255,255,.04), 0 2px 8px rgba(15,23,42,.18); }
.brand { display: flex; align-items: center; gap: 8px; font-weight: 650; white-space: nowrap; }
.logo { width: 18px; height: 18px; border-radius: 5px; background: linear-gradient(135deg, #60a5fa, #a78bfa); }
.brand .sub { font-weight: 400; color: #94a3b8; }
.title { flex: 1; min-width: 0; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; color: #cbd5e1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.meta { color: #94a3b8; font-size: 13px; font-variant-numeric: tabular-nums; white-space: nowrap; }
.meta .sep { margin: 0 8px; }
.conn { font-size: 12px; color: #94a3b8; white-space: nowrap; }
.conn::before { content: ""; display: inline-block; width: 7px; height: 7px; border-radius: 50%; background: #64748b; margin-right: 6px; vertical-align: 1px; }
.conn[data-state="live"]::before { background: #22c55e; }
.conn[data-state="reconnecting"]::before { background: #f59e0b; }
.phase { text-transform: uppercase; letter-spacing: .06em; font-size: 11px; font-weight: 700; padding: 4px 10px; border-radius: 999px; background: #334155; color: #e2e8f0; white-space: nowrap; }
.phase[data-phase="streaming"] { background: #1d4ed8; color: #fff; }
.phase[data-phase="finishing"] { background: #b45309; color: #fff; }
.phase[data-phase="done"] { background: #15803d; color: #fff; }
.phase[data-phase="error"] { background: #b91c1c; color: #fff; }
.error { margin: 16px 24px 0; padding: 10px 14px; border: 1px solid #fecaca; background: #fef2f2; color: #991b1b; border-radius: 10px; }
.error .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-weight: 600; margin-right: 8px; }
.grid { display: grid; grid-template-columns: minmax(0, 1.65fr) minmax(340px, 1fr); gap: 16px; padding: 16px 24px 24px; align-items: start; }
.side { display: flex; flex-direction: column; gap: 16px; min-width: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 14px 16px 16px; box-shadow: 0 1px 2px rgba(15,23,42,.04); min-width: 0; }
.card-head { display: flex; align-items: baseline; justify-content: space-between; gap: 8px; margin-bottom: 10px; }
h2 { margin: 0; font-size: 11px; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); font-weight: 700; }
.muted { color: var(--muted); font-size: 12px; }
.empty { color: #94a3b8; margin: 4px 0; font-size: 13px; }
.note { margin: 16px 24px 0; padding: 10px 14px; border: 1px solid #bfdbfe; background: #eff6ff; color: #1e3a8a; border-radius: 10px; }
.text.none { color: var(--muted); font-size: 13px; }
.transcript-card { position: sticky; top: 66px; }
.scroll { max-height: calc(100vh - 140px); overflow-y: auto; padding-right: 4px; }
.transcript { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 8px; }
.line { padding: 7px 12px 8px; border-left: 3px solid var(--spk, #94a3b8); background: var(--soft); border-radius: 0 8px 8px 0; }
.line.partial { background: #fff; border-left-style: dashed; box-shadow: inset 0 0 0 1px var(--line); }
.line.partial .text { color: var(--muted); font-style: italic; }
.who { display: flex; align-items: center; gap: 8px; font-size: 12px; color: var(--muted); margin-bottom: 2px; }
.spk { font-weight: 650; color: var(--ink); }
.role { font-size: 11px; padding: 0 7px; border-radius: 999px; background: #e2e8f0; color: #334155; }
.time { margin-left: auto; font-variant-numeric: tabular-nums; }
.text { margin: 0; font-size: 15px; overflow-wrap: anywhere; }
.tag { font-size: 11px; line-height: 16px; padding: 0 8px; border-radius: 999px; background: #eef2ff; color: #3730a3; }
.tag.live { background: #fef3c7; color: #92400e; }
.tag.accent { background: #ecfeff; color: #155e75; }
.tag.live::before { content: ""; display: inline-block; width: 6px; height: 6px; border-radius: 50%; background: #f59e0b; margin-right: 5px; vertical-align: 1px; animation: pulse 1s ease-in-out infinite; }
@keyframes pulse { 50% { opacity: .25; } }
.conv-type { font-size: 17px; font-weight: 650; margin-bottom: 8px; overflow-wrap: anywhere; }
.conv-type.none { font-size: 13px; font-weight: 400; color: #94a3b8; }
.roles { list-style: none; margin: 0; padding: 0; }
.roles li { display: flex; align-items: center; gap: 10px; padding: 7px 0; border-top: 1px solid var(--line); }
.dot { width: 10px; height: 10px; border-radius: 50%; background: var(--spk, #94a3b8); flex: none; }
.roles .spk { font-weight: 400; color: var(--muted); min-width: 70px; }
.roles .name { font-weight: 650; }
.roles .unassigned { color: #94a3b8; font-style: italic; }
.roles .conf { margin-left: auto; color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; list-style: none; margin: 0; padding: 0; }
.chip { background: #eff6ff; color: #1e40af; border: 1px solid #dbeafe; padding: 3px 11px; border-radius: 999px; font-size: 13px; overflow-wrap: anywhere; }
.sentiment svg { display: block; width: 100%; height: auto; }
.sentiment .topic { font-size: 12px; font-weight: 650; fill: var(--ink); }
.sentiment .label { font-size: 11px; fill: var(--muted); }
.sentiment .value { font-size: 11px; fill: var(--ink); font-variant-numeric: tabular-nums; }
.sentiment .axis { font-size: 10px; fill: #94a3b8; }
.sentiment .track { fill: #f1f5f9; }
.sentiment .zero { stroke: #94a3b8; stroke-width: 1; }
.sentiment .grid-line { stroke: #e2e8f0; stroke-width: 1; stroke-dasharray: 2 3; }
.behaviors { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 6px; }
.behaviors li { display: flex; align-items: center; gap: 10px; padding: 7px 10px; border-radius: 8px; background: var(--soft); border: 1px solid var(--line); }
.behaviors .name { font-weight: 600; flex: 1; min-width: 0; overflow-wrap: anywhere; }
.behaviors .by { font-size: 12px; color: var(--muted); white-space: nowrap; }
.behaviors .at { font-size: 12px; color: var(--muted); font-variant-numeric: tabular-nums; }
.behaviors li.fresh { animation: flash 2.4s ease-out; }
@keyframes flash { from { background: #fde68a; border-color: #f59e0b; } to { background: var(--soft); border-color: var(--line); } }
.summary { margin: 0; font-size: 14px; color: #1e293b; overflow-wrap: anywhere; }
.summary.none { color: #94a3b8; font-size: 13px; }
@media (max-width: 900px) {
  .grid { grid-template-columns: minmax(0, 1fr); padding: 12px; }
  .transcript-card { position: static; }
  .top { flex-wrap: wrap; gap: 10px; padding: 10px 12px; }
  .meta, .conn { display: none; }
}
`;

/** The page's script. Plain ES5-ish JS; every text goes through textContent. */
export const PAGE_JS = `(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var PALETTE = ['#2563eb', '#db2777', '#0d9488', '#d97706', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];
  var speakers = [];
  var states = 0;
  var firstRender = true;
  var lines = new Map();
  var behaviorItems = new Map();

  function byId(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function colorOf(label) {
    if (label === null || label === undefined) return '#94a3b8';
    var i = speakers.indexOf(label);
    if (i < 0) { speakers.push(label); i = speakers.length - 1; }
    return PALETTE[i % PALETTE.length];
  }
  function clock(ms) {
    if (typeof ms !== 'number') return '';
    var s = ms / 1000, m = Math.floor(s / 60), r = s - m * 60;
    return m + ':' + (r < 10 ? '0' : '') + r.toFixed(1);
  }
  function roleName(view, label) {
    var r = label === null || label === undefined ? undefined : view.roles[label];
    return r ? (r.name || r.participant_role_uuid || 'assigned') : null;
  }
  function speakerText(label) { return label === null || label === undefined ? 'Speaker ?' : 'Speaker ' + label; }
  function percent(x) { return typeof x === 'number' ? Math.round(x * 100) + '%' : ''; }

  function renderHeader(view) {
    document.title = (view.title ? view.title + ' — ' : '') + 'svc-stream dashboard';
    byId('title').textContent = view.title || '';
    var phase = byId('phase');
    phase.dataset.phase = view.phase;
    phase.textContent = view.phase === 'error' && view.error ? 'error · ' + view.error.code : view.phase;
    document.body.dataset.phase = view.phase;
    var pos = view.duration_ms;
    if (typeof pos !== 'number') {
      pos = 0;
      view.transcript.forEach(function (t) {
        var c = t.clip;
        var end = t.status === 'partial' ? c.end_ms : (typeof c.start_ms === 'number' && typeof c.duration_ms === 'number' ? c.start_ms + c.duration_ms : null);
        if (typeof end === 'number' && end > pos) pos = end;
      });
    }
    byId('audio-pos').textContent = clock(pos);
    byId('event-count').textContent = String(view.events_received);
    var box = byId('error');
    if (view.phase === 'error' || view.server_error) {
      clear(box);
      box.appendChild(el('span', 'code', view.error ? view.error.code : 'server error'));
      box.appendChild(document.createTextNode((view.error && view.error.message) || view.server_error || ''));
      box.hidden = false;
    } else {
      box.hidden = true;
    }
  }

  function renderTranscript(view) {
    var list = byId('transcript');
    var scroller = byId('transcript-scroll');
    var stick = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
    var seen = new Set();
    var finals = 0;
    view.transcript.forEach(function (entry, index) {
      var c = entry.clip;
      seen.add(c.clip_uuid);
      if (entry.status === 'final') finals++;
      var li = lines.get(c.clip_uuid);
      if (!li) { li = el('li'); lines.set(c.clip_uuid, li); }
      li.className = 'line ' + entry.status;
      li.dataset.status = entry.status;
      li.dataset.speaker = c.speaker_label === null || c.speaker_label === undefined ? '' : c.speaker_label;
      li.style.setProperty('--spk', colorOf(c.speaker_label));
      clear(li);
      var who = el('div', 'who');
      who.appendChild(el('span', 'spk', speakerText(c.speaker_label)));
      var role = roleName(view, c.speaker_label);
      if (role) who.appendChild(el('span', 'role', role));
      if (entry.status === 'partial') who.appendChild(el('span', 'tag live', 'in progress'));
      if (c.emotion) who.appendChild(el('span', 'tag', c.emotion));
      if (c.accent) who.appendChild(el('span', 'tag accent', c.accent));
      who.appendChild(el('span', 'time', clock(c.start_ms)));
      li.appendChild(who);
      // A final clip without text is finished (its timing and speaker stand); only a partial is '…'.
      if (c.text) li.appendChild(el('p', 'text', c.text));
      else if (entry.status === 'partial') li.appendChild(el('p', 'text', '…'));
      else li.appendChild(el('p', 'text none', 'no transcript' + (typeof c.duration_ms === 'number' ? ' · ' + (c.duration_ms / 1000).toFixed(1) + ' s' : '')));
      if (list.children[index] !== li) list.insertBefore(li, list.children[index] || null);
    });
    lines.forEach(function (li, uuid) {
      if (!seen.has(uuid)) { li.remove(); lines.delete(uuid); }
    });
    byId('transcript-empty').hidden = view.transcript.length > 0;
    byId('transcript-empty').textContent = ended(view) ? 'No speech was detected' : 'Waiting for speech…';
    var partials = view.transcript.length - finals;
    byId('clip-count').textContent = view.transcript.length ? finals + ' final' + (partials ? ', ' + partials + ' in progress' : '') : '';
    if (stick) scroller.scrollTop = scroller.scrollHeight;
  }

  function knownSpeakers(view) {
    view.transcript.forEach(function (t) { if (t.clip.speaker_label) colorOf(t.clip.speaker_label); });
    Object.keys(view.roles).forEach(colorOf);
    view.topic_sentiments.forEach(function (t) { colorOf(t.speaker_label); });
    return speakers.slice();
  }

  function renderConversation(view) {
    var type = view.conversation_type;
    var box = byId('conv-type');
    box.className = 'conv-type' + (type ? '' : ' none');
    box.textContent = type ? (type.name || type.conversation_type_uuid) : ended(view) ? 'No conversation type was detected' : 'No conversation type yet';
    byId('conv-source').textContent = type ? type.selection_source.replace(/_/g, ' ') + (typeof type.confidence === 'number' ? ' · ' + percent(type.confidence) : '') : '';
    var list = byId('roles');
    clear(list);
    knownSpeakers(view).forEach(function (label) {
      var li = el('li');
      li.dataset.speaker = label;
      li.style.setProperty('--spk', colorOf(label));
      li.appendChild(el('span', 'dot'));
      li.appendChild(el('span', 'spk', speakerText(label)));
      var pick = view.roles[label];
      li.appendChild(pick ? el('span', 'name', pick.name || pick.participant_role_uuid || 'assigned') : el('span', 'unassigned', 'unassigned'));
      if (pick && typeof pick.confidence === 'number') li.appendChild(el('span', 'conf', percent(pick.confidence)));
      list.appendChild(li);
    });
    if (!list.firstChild) list.appendChild(el('li', 'empty', 'No speakers yet'));
  }

  function renderTopics(view) {
    var list = byId('topics');
    clear(list);
    view.topics.forEach(function (t) { list.appendChild(el('li', 'chip', t)); });
    if (!view.topics.length) list.appendChild(el('li', 'empty', ended(view) ? 'No topics' : 'No topics yet'));
  }

  function renderSentiment(view) {
    var box = byId('sentiment');
    clear(box);
    var items = view.topic_sentiments;
    if (!items.length) { box.appendChild(el('p', 'empty', ended(view) ? 'No sentiment' : 'No sentiment yet')); return; }
    var topics = [];
    items.forEach(function (t) { if (topics.indexOf(t.topic) < 0) topics.push(t.topic); });
    var W = 380, X0 = 112, X1 = W - 44, MID = (X0 + X1) / 2, HALF = (X1 - X0) / 2;
    var TOPIC = 20, ROW = 20, GAP = 8, AXIS = 18;
    var height = AXIS;
    topics.forEach(function (topic) { height += TOPIC + GAP + ROW * items.filter(function (t) { return t.topic === topic; }).length; });
    var root = svg('svg', { viewBox: '0 0 ' + W + ' ' + height, role: 'img', 'aria-label': 'Topic sentiment per speaker' });
    [-1, -0.5, 0.5, 1].forEach(function (v) {
      root.appendChild(svg('line', { x1: MID + v * HALF, x2: MID + v * HALF, y1: 0, y2: height - AXIS + 2, 'class': 'grid-line' }));
    });
    var y = 0;
    topics.forEach(function (topic) {
      root.appendChild(svg('text', { x: 0, y: y + 14, 'class': 'topic' }, topic));
      y += TOPIC;
      items.filter(function (t) { return t.topic === topic; }).forEach(function (t) {
        var score = Math.max(-1, Math.min(1, t.sentiment_score));
        var role = roleName(view, t.speaker_label);
        var g = svg('g', { 'class': 'bar', 'data-topic': t.topic, 'data-speaker': t.speaker_label });
        g.appendChild(svg('title', {}, t.topic + ' / ' + speakerText(t.speaker_label) + ': ' + score.toFixed(2) + (t.sentiment_label ? ' (' + t.sentiment_label + ')' : '')));
        g.appendChild(svg('text', { x: 8, y: y + 13, 'class': 'label' }, role ? t.speaker_label + ' · ' + role : speakerText(t.speaker_label)));
        g.appendChild(svg('rect', { x: X0, y: y + 3, width: X1 - X0, height: 12, rx: 3, 'class': 'track' }));
        var w = Math.abs(score) * HALF;
        g.appendChild(svg('rect', { x: score < 0 ? MID - w : MID, y: y + 3, width: Math.max(w, 1.5), height: 12, rx: 3, fill: colorOf(t.speaker_label) }));
        g.appendChild(svg('text', { x: X1 + 6, y: y + 13, 'class': 'value' }, (score > 0 ? '+' : '') + score.toFixed(2)));
        root.appendChild(g);
        y += ROW;
      });
      y += GAP;
    });
    root.appendChild(svg('line', { x1: MID, x2: MID, y1: 0, y2: height - AXIS + 2, 'class': 'zero' }));
    [[-1, '−1 negative', 'start'], [0, '0', 'middle'], [1, 'positive +1', 'end']].forEach(function (a) {
      root.appendChild(svg('text', { x: MID + a[0] * HALF, y: height - 4, 'text-anchor': a[2], 'class': 'axis' }, a[1]));
    });
    box.appendChild(root);
  }

  function renderBehaviors(view) {
    var list = byId('behaviors');
    var starts = new Map();
    view.clips.forEach(function (c) { starts.set(c.clip_uuid, c.start_ms); });
    var seen = new Set();
    view.behaviors.forEach(function (b, index) {
      var key = b.behavior_uuid + '|' + (b.speaker_label || '');
      seen.add(key);
      var li = behaviorItems.get(key);
      if (!li) {
        li = el('li');
        behaviorItems.set(key, li);
        if (!firstRender) li.classList.add('fresh');
      }
      clear(li);
      li.dataset.behavior = b.behavior_name || b.behavior_uuid;
      li.style.setProperty('--spk', colorOf(b.speaker_label));
      li.appendChild(el('span', 'dot'));
      li.appendChild(el('span', 'name', b.behavior_name || b.behavior_uuid));
      var role = roleName(view, b.speaker_label);
      li.appendChild(el('span', 'by', b.speaker_label ? speakerText(b.speaker_label) + (role ? ' · ' + role : '') : 'no speaker'));
      // When it happened: the start of its definitive clip, else of its first evidence clip.
      var clip = b.definitive_clip_uuid || (b.evidence_clip_uuids && b.evidence_clip_uuids[0]);
      var at = clip ? starts.get(clip) : undefined;
      if (typeof at === 'number') li.appendChild(el('span', 'at', clock(at)));
      if (list.children[index] !== li) list.insertBefore(li, list.children[index] || null);
    });
    behaviorItems.forEach(function (li, key) { if (!seen.has(key)) { li.remove(); behaviorItems.delete(key); } });
    var empty = list.querySelector('.empty');
    if (empty) empty.textContent = ended(view) ? 'None detected' : 'None detected yet';
    if (!view.behaviors.length && !empty) list.appendChild(el('li', 'empty', ended(view) ? 'None detected' : 'None detected yet'));
    if (view.behaviors.length && empty) empty.remove();
    byId('behavior-count').textContent = view.behaviors.length ? String(view.behaviors.length) : '';
  }

  function renderSummary(view) {
    var p = byId('summary');
    p.className = 'summary' + (view.summary ? '' : ' none');
    p.textContent = view.summary || (ended(view) ? 'No summary' : 'No summary yet');
  }

  function ended(view) {
    return view.phase === 'done' || view.phase === 'error' || view.phase === 'closed';
  }

  // Why the fields are empty, once the session is done: a server that does not transcribe
  // (the emulator without a scenario) sends clips with timing and speakers but no text.
  function renderNote(view) {
    var note = byId('note');
    var finals = view.clips.length;
    var silent = finals > 0 && view.clips.every(function (c) { return !c.text; });
    if (view.phase === 'done') {
      note.textContent = 'The session is done: ' + finals + (finals === 1 ? ' clip' : ' clips') + (typeof view.duration_ms === 'number' ? ' in ' + clock(view.duration_ms) + ' of audio' : '') + '.' +
        (silent ? ' No clip has text and nothing was inferred from it: the local emulator does not transcribe your audio. Give it a scenario file (--scenario) for a scripted conversation, or set SVC_BASE_URL and SVC_API_KEY for the real service.' : '');
      note.hidden = false;
    } else {
      note.hidden = true;
    }
  }

  function render(view) {
    knownSpeakers(view);
    renderHeader(view);
    renderTranscript(view);
    renderConversation(view);
    renderTopics(view);
    renderSentiment(view);
    renderBehaviors(view);
    renderSummary(view);
    renderNote(view);
    firstRender = false;
    states++;
    document.body.dataset.states = String(states);
    document.body.dataset.version = String(view.version);
  }

  function connection(state, text) {
    var c = byId('conn');
    c.dataset.state = state;
    c.textContent = text;
  }

  var source = new EventSource('/events');
  source.addEventListener('open', function () { connection('live', 'live'); });
  source.addEventListener('state', function (e) { render(JSON.parse(e.data)); });
  source.addEventListener('end', function () { source.close(); connection('ended', 'session ended'); });
  source.addEventListener('error', function () {
    if (source.readyState === EventSource.CONNECTING) connection('reconnecting', 'reconnecting…');
    else if (source.readyState === EventSource.CLOSED) connection('ended', 'disconnected');
  });
})();
`;
