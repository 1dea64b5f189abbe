// The dashboard page: HTML and styles as strings (tsc emits only .ts, so they ship inside the
// compiled module). Its script is bundled from ./page/ (see pageBundle.ts). No library, no
// CDN: the script builds every node with textContent, so text from the service is never markup.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc-stream dashboard</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body data-status="loading" data-states="0">
<header class="top">
  <div class="brand"><span class="logo" aria-hidden="true"></span><span>svc-stream</span><span class="sub">live analysis</span></div>
  <div class="title" id="title"></div>
  <div class="meta"><span id="audio-pos">0:00.0</span> audio<span class="sep">·</span><span id="event-count">0</span> events</div>
  <span id="conn" class="conn" data-state="connecting">connecting</span>
  <span id="status" class="session-status" data-status="connecting">connecting</span>
</header>
<div id="source" class="source" data-source="" hidden></div>
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
.session-status { text-transform: uppercase; letter-spacing: .06em; font-size: 11px; font-weight: 700; padding: 4px 10px; border-radius: 999px; background: #334155; color: #e2e8f0; white-space: nowrap; }
.session-status[data-status="streaming"] { background: #1d4ed8; color: #fff; }
.session-status[data-status="paused"], .session-status[data-status="reconnecting"] { background: #a16207; color: #fff; }
.session-status[data-status="finishing"], .session-status[data-status="closing"] { background: #b45309; color: #fff; }
.session-status[data-status="done"] { background: #15803d; color: #fff; }
.session-status[data-status="failed"] { background: #b91c1c; color: #fff; }
.error { margin: 16px 24px 0; padding: 10px 14px; border: 1px solid #fecaca; background: #fef2f2; color: #991b1b; border-radius: 10px; }
.error .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-weight: 600; margin-right: 8px; }
.grid { display: grid; grid-template-columns: minmax(0, 1.65fr) minmax(340px, 1fr); gap: 16px; padding: 16px 24px 24px; align-items: start; }
.side { display: flex; flex-direction: column; gap: 16px; min-width: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 14px 16px 16px; box-shadow: 0 1px 2px rgba(15,23,42,.04); min-width: 0; }
.card-head { display: flex; align-items: baseline; justify-content: space-between; gap: 8px; margin-bottom: 10px; }
h2 { margin: 0; font-size: 11px; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); font-weight: 700; }
.muted { color: var(--muted); font-size: 12px; }
.empty { color: #94a3b8; margin: 4px 0; font-size: 13px; }
.source { margin: 12px 24px 0; padding: 6px 12px; border: 1px solid #fcd34d; background: #fffbeb; color: #78350f; border-radius: 10px; font-size: 13px; }
.source::before { content: "source: "; font-weight: 700; }
.source[data-source="service"] { border-color: var(--line); background: var(--soft); color: var(--muted); }
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
