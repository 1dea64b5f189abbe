// The dashboard page's rendering: one DashboardView drawn into the page's fixed HTML
// (src/dashboard/page.ts). Plain JS bundled into the page by esbuild (its types are in
// render.d.ts); every text from the service goes through textContent, never markup.
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
  var status = byId('status');
  status.dataset.status = view.status;
  status.textContent = view.status === 'failed' && view.error ? 'failed · ' + view.error.code : view.status === 'reconnecting' ? 'reconnecting…' : view.status;
  document.body.dataset.status = view.status;
  // The figures come computed in the view (dashboardView): the page formats them.
  byId('audio-pos').textContent = clock(view.audio_ms);
  byId('event-count').textContent = String(view.events_received);
  var box = byId('error');
  if (view.status === 'failed' || view.server_error || view.error) {
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
  // A failed session's empty transcript says why, not that nobody spoke.
  byId('transcript-empty').textContent = view.status === 'failed' ? 'The session failed' + (view.error ? ': ' + view.error.code + ': ' + view.error.message : '') : ended(view) ? 'No speech was detected' : 'Waiting for speech…';
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
  return view.status === 'done' || view.status === 'failed' || view.status === 'closed';
}

// Why the fields are empty, once the session is done: a server that does not transcribe
// (the emulator without a scenario) sends clips with timing and speakers but no text.
function renderNote(view) {
  var note = byId('note');
  var finals = view.clips.length;
  var silent = finals > 0 && view.clips.every(function (c) { return !c.text; });
  if (view.status === 'done') {
    note.textContent = 'The session is done: ' + finals + (finals === 1 ? ' clip' : ' clips') + (typeof view.duration_ms === 'number' ? ' in ' + clock(view.duration_ms) + ' of audio' : '') + '.' +
      (silent ? ' No clip has text and nothing was inferred from it: the local emulator does not transcribe your audio. Give it a scenario file (--scenario) for a scripted conversation, or set SVC_BASE_URL and SVC_API_KEY for the real service.' : '');
    note.hidden = false;
  } else {
    note.hidden = true;
  }
}

// What made the results, as the view's label says it (its text made by labelText, in main.ts).
function renderSource(view, text) {
  var box = byId('source');
  box.hidden = !view.label;
  box.dataset.source = view.label ? view.label.source : '';
  box.textContent = text || '';
}

export function render(view, labelText) {
  knownSpeakers(view);
  renderHeader(view);
  renderSource(view, view.label ? labelText : '');
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

/** Show the connection's state in the header: live, reconnecting, ended. */
export function connection(state, text) {
  var c = byId('conn');
  c.dataset.state = state;
  c.textContent = text;
}
