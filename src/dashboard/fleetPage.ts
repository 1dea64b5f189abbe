// The supervisor's page: HTML and its own styles as strings (beside the call page's styles,
// which it shares for the header and badges). Its script is bundled from ./page/fleet.ts.

export const FLEET_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc-stream fleet</title>
<link rel="stylesheet" href="/app.css">
<link rel="stylesheet" href="/fleet.css">
<script src="/fleet.js" defer></script>
</head>
<body data-updates="0">
<header class="top">
  <div class="brand"><span class="logo" aria-hidden="true"></span><span>svc-stream</span><span class="sub">fleet</span></div>
  <div class="title" id="title"></div>
  <div class="meta"><span id="live-count">0</span> live<span class="sep">·</span><span id="ended-count">0</span> ended</div>
  <span id="conn" class="conn" data-state="connecting">connecting</span>
</header>
<main class="fleet">
  <section class="card">
    <table class="calls">
      <thead><tr><th>Call</th><th>Status</th><th>Duration</th><th>Roles</th><th>Latest emotion</th><th>Behaviors</th></tr></thead>
      <tbody id="calls"></tbody>
    </table>
    <p id="empty" class="empty">No calls yet: sessions published to this Redis (--publish) appear here as they start.</p>
  </section>
</main>
</body>
</html>
`;

export const FLEET_CSS = `.fleet { padding: 16px 24px 24px; }
.calls { width: 100%; border-collapse: collapse; font-size: 13px; }
.calls th { text-align: left; font-size: 11px; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); font-weight: 700; padding: 6px 10px; border-bottom: 1px solid var(--line); }
.calls td { padding: 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
.calls tr[data-ended="true"] td { color: var(--muted); }
.calls .name a { font-weight: 600; color: var(--ink); text-decoration: none; }
.calls .name a:hover { text-decoration: underline; }
.calls .mono, .calls .duration { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; font-variant-numeric: tabular-nums; }
.calls .chip { display: inline-block; margin: 0 4px 4px 0; padding: 2px 8px; border-radius: 999px; background: var(--soft); border: 1px solid var(--line); font-size: 12px; }
.calls .role { white-space: nowrap; }
.calls .col-roles .muted { font-size: 12px; }
.session-status[data-status="stale"] { background: #6b7280; color: #fff; }
.calls .source { display: block; width: fit-content; max-width: 100%; margin: 4px 0 0; padding: 2px 8px; border-radius: 6px; font-size: 12px; font-weight: 400; }
`;
