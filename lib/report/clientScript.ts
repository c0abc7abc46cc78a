// The one script of a report page, inlined and allowed by its hash. It reads the page's data
// block with JSON.parse and builds the interactive parts (timelines, move tables, the batch's
// run table) with createElement and textContent only: no innerHTML, no URL built from data, no
// style attribute. Plain ES2017, no template literals (this file is itself a template-free
// string). Times in the data are milliseconds from the run's start.

export const CLIENT_SCRIPT = String.raw`(function () {
'use strict';
var D = JSON.parse(document.getElementById('report-data').textContent);
var S = D.s;
var SVGNS = 'http://www.w3.org/2000/svg';
var KIND = new Map(D.order.map(function (p) { return [p[0], p[1]]; }));
var ORDER = D.order.map(function (p) { return p[0]; });
var PAGE = 100;
var MOVE_ROWS = 500;

function str(i) { return i < 0 ? '' : S[i]; }
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function sv(tag, attrs) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
  return e;
}
function dur(ms) {
  if (!isFinite(ms)) return String(ms);
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  var s = Math.round(ms / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return (h > 0 ? h + ' h ' : '') + m + ' min ' + (s % 60) + ' s';
}
function usd(n) { return '$' + n.toFixed(n >= 100 ? 2 : 4); }
// A run's charge (billed + uncertain, what caps count) with its uncertain part and its calls of unknown cost beside it; and the figures apart.
function unknownCost(n) { return n + (n === 1 ? ' call' : ' calls') + ' of unknown cost'; }
function costCell(r) {
  var notes = [];
  if (r.uncertain > 0) notes.push(usd(r.uncertain) + ' uncertain');
  if (r.unpriced > 0) notes.push(unknownCost(r.unpriced));
  return notes.length > 0 ? usd(r.cost) + ' (' + notes.join(', ') + ')' : usd(r.cost);
}
function money(r) {
  var out = usd(Math.max(0, r.cost - r.uncertain)) + ' billed';
  if (r.uncertain > 0) out += ', ' + usd(r.uncertain) + ' uncertain';
  if (r.released > 0) out += ', ' + usd(r.released) + ' released (not billed)';
  if (r.unpriced > 0) out += ', and ' + unknownCost(r.unpriced);
  return out;
}
function kindOf(state) { return KIND.get(state) || 'other'; }
function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
}

// A run's moves, decoded: [seq, from, to, at, durationMs, description, data, flags].
function decode(run) {
  var moves = run.m.map(function (m) {
    return { seq: m[0], from: str(m[1]), to: str(m[2]), at: m[3], ms: m[4], desc: str(m[5]), data: m[6] < 0 ? null : str(m[6]), forced: (m[7] & 1) === 1, retried: (m[7] & 2) === 2 };
  });
  var said = new Map((run.c || []).map(function (c) { return [c[0], str(c[1])]; }));
  var rejected = run.r.map(function (r) {
    return { after: r[0], from: str(r[1]), to: str(r[2]), at: r[3], desc: str(r[4]), allowed: str(r[5]) };
  });
  return { moves: moves, rejected: rejected, said: said };
}

function timeline(moves, rejected, onPick) {
  var visited = new Set();
  moves.forEach(function (m) { visited.add(m.from); visited.add(m.to); });
  var lanes = ORDER.filter(function (s) { return visited.has(s); });
  visited.forEach(function (s) { if (lanes.indexOf(s) < 0) lanes.push(s); });
  var W = 1000, L = 200, R = 16, LANE = 20, TOP = 6, AXIS = 26;
  var span = 1;
  moves.forEach(function (m) { if (m.at > span) span = m.at; });
  rejected.forEach(function (r) { if (r.at > span) span = r.at; });
  var H = TOP + lanes.length * LANE + AXIS;
  var x = function (t) { return Math.round((L + (t / span) * (W - L - R)) * 10) / 10; };
  var laneY = function (s) { return TOP + lanes.indexOf(s) * LANE; };
  var svg = sv('svg', { 'class': 'timeline', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'Timeline: one bar per state visit' });
  lanes.forEach(function (s, i) {
    if (i % 2 === 1) svg.appendChild(sv('rect', { 'class': 'lane-alt', x: 0, y: laneY(s), width: W, height: LANE }));
    var label = sv('text', { 'class': 'label', x: L - 8, y: laneY(s) + 14, 'text-anchor': 'end' });
    label.textContent = s;
    svg.appendChild(label);
  });
  for (var i = 0; i <= 5; i++) {
    var t = (span * i) / 5;
    svg.appendChild(sv('line', { 'class': 'grid', x1: x(t), y1: TOP, x2: x(t), y2: H - AXIS }));
    var tick = sv('text', { 'class': 'tick', x: x(t), y: H - AXIS + 16, 'text-anchor': i === 0 ? 'start' : i === 5 ? 'end' : 'middle' });
    tick.textContent = '+' + dur(t);
    svg.appendChild(tick);
  }
  function bar(state, start, end, move, extra) {
    var x0 = x(start), w = Math.max(3, x(end) - x0);
    // A move's marks go on the visit it ended; the final state's bar is only the state.
    var marked = extra === '';
    var cls = 'visit k-' + kindOf(state) + (marked && move.forced ? ' forced' : '') + (marked && move.retried ? ' retried' : '') + extra;
    var rect = sv('rect', { 'class': cls, x: x0, y: laneY(state) + 3, width: w, height: LANE - 6, rx: 2, 'data-seq': move.seq, 'data-state': state, tabindex: 0 });
    var title = sv('title', {});
    title.textContent = state + ' for ' + dur(end - start) + ' — seq ' + move.seq + ': ' + move.from + ' → ' + move.to + (move.forced ? ' (forced)' : '') + (move.retried ? ' (retried)' : '') + (move.desc ? ' — ' + move.desc : '');
    rect.appendChild(title);
    rect.addEventListener('click', function () { onPick(move.seq); });
    rect.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') onPick(move.seq); });
    svg.appendChild(rect);
  }
  moves.forEach(function (m) { bar(m.from, Math.max(0, m.at - m.ms), m.at, m, ''); });
  if (moves.length > 0) {
    var last = moves[moves.length - 1];
    bar(last.to, last.at, last.at, last, ' final');
  }
  moves.forEach(function (m) {
    if (!m.forced) return;
    svg.appendChild(sv('line', { 'class': 'mark-forced', x1: x(m.at), y1: Math.min(laneY(m.from), laneY(m.to)) + 2, x2: x(m.at), y2: Math.max(laneY(m.from), laneY(m.to)) + LANE - 2 }));
  });
  rejected.forEach(function (r) {
    if (lanes.indexOf(r.from) < 0) return;
    var cx = x(r.at), cy = laneY(r.from) + LANE / 2;
    var mark = sv('path', { 'class': 'mark-rejected', d: 'M' + (cx - 5) + ',' + (cy - 5) + 'L' + (cx + 5) + ',' + (cy + 5) + 'M' + (cx + 5) + ',' + (cy - 5) + 'L' + (cx - 5) + ',' + (cy + 5) });
    var title = sv('title', {});
    title.textContent = 'rejected: ' + r.from + ' → ' + r.to + (r.desc ? ' — ' + r.desc : '') + ' (allowed: ' + (r.allowed || 'nothing') + ')';
    mark.appendChild(title);
    svg.appendChild(mark);
  });
  var box = el('div', 'timeline-box');
  box.appendChild(svg);
  return box;
}

// Timeline, the chosen move's details and the move table, for one run.
function runView(run) {
  var d = decode(run);
  var root = el('div', 'run-view-body');
  var detail = el('div', 'detail');
  detail.id = 'move-detail';
  detail.appendChild(el('p', 'hint', 'Click a bar of the timeline or a row of the table to see that move’s description and data.'));
  var rows = new Map();
  function pick(seq) {
    var m = null;
    for (var i = 0; i < d.moves.length; i++) if (d.moves[i].seq === seq) m = d.moves[i];
    if (!m) return;
    detail.textContent = '';
    detail.setAttribute('data-seq', String(seq));
    var head = el('h3', null, 'seq ' + m.seq + ' · +' + dur(m.at) + ' · ' + m.from + ' → ' + m.to);
    detail.appendChild(head);
    var facts = el('p', 'facts', 'after ' + dur(m.ms) + ' in ' + m.from + (m.forced ? ' · FORCED' : '') + (m.retried ? ' · LLM call retried' : ''));
    detail.appendChild(facts);
    detail.appendChild(el('p', 'desc', m.desc === '' ? '(no description)' : m.desc));
    var pre = el('pre', 'data', m.data === null ? '(no data)' : pretty(m.data));
    detail.appendChild(pre);
    var said = d.said.get(seq);
    if (said !== undefined) {
      detail.appendChild(el('h4', null, 'What was said before this move'));
      detail.appendChild(el('pre', 'said', said));
    }
    rows.forEach(function (tr) { tr.classList.remove('picked'); });
    var tr = rows.get(seq);
    if (tr) tr.classList.add('picked');
  }
  root.appendChild(el('h2', null, 'Timeline'));
  root.appendChild(timeline(d.moves, d.rejected, pick));
  root.appendChild(detail);

  root.appendChild(el('h2', null, 'Moves'));
  var bar = el('div', 'controls');
  var label = el('label', null, 'State: ');
  var select = el('select', 'state-filter');
  select.appendChild(el('option', null, 'all states')).value = '';
  var seen = new Set();
  d.moves.forEach(function (m) { seen.add(m.from); seen.add(m.to); });
  ORDER.concat(Array.from(seen)).forEach(function (s) {
    if (!seen.has(s)) return;
    seen.delete(s);
    var o = el('option', null, s);
    o.value = s;
    select.appendChild(o);
  });
  label.appendChild(select);
  bar.appendChild(label);
  var count = el('span', 'count');
  bar.appendChild(count);
  root.appendChild(bar);
  var table = el('table', 'moves');
  var head = el('tr');
  ['seq', 'time', 'move', 'in from', 'description', 'data'].forEach(function (h) { head.appendChild(el('th', null, h)); });
  table.appendChild(el('thead')).appendChild(head);
  var body = el('tbody');
  table.appendChild(body);
  root.appendChild(table);
  var more = el('button', 'more', '');
  more.type = 'button';
  root.appendChild(more);
  var limit = MOVE_ROWS;
  function fill() {
    var want = select.value;
    var list = [];
    var ri = 0;
    d.moves.forEach(function (m) {
      while (ri < d.rejected.length && d.rejected[ri].after < m.seq) list.push({ rejected: d.rejected[ri++] });
      list.push({ move: m });
    });
    while (ri < d.rejected.length) list.push({ rejected: d.rejected[ri++] });
    list = list.filter(function (e) { var m = e.move || e.rejected; return want === '' || m.from === want || m.to === want; });
    body.textContent = '';
    rows.clear();
    list.slice(0, limit).forEach(function (e) {
      var tr = el('tr');
      if (e.move) {
        var m = e.move;
        tr.className = 'k-row-' + kindOf(m.to) + (m.forced ? ' forced' : '');
        tr.setAttribute('data-seq', String(m.seq));
        tr.appendChild(el('td', 'num', m.seq));
        tr.appendChild(el('td', 'num', '+' + dur(m.at)));
        tr.appendChild(el('td', null, m.from + ' → ' + m.to + (m.forced ? ' (forced)' : '') + (m.retried ? ' (retried)' : '')));
        tr.appendChild(el('td', 'num', dur(m.ms)));
        tr.appendChild(el('td', null, m.desc));
        tr.appendChild(el('td', 'data', m.data === null ? '' : (m.data.length > 160 ? m.data.slice(0, 159) + '…' : m.data)));
        tr.addEventListener('click', function () { pick(m.seq); });
        rows.set(m.seq, tr);
      } else {
        var r = e.rejected;
        tr.className = 'rejected';
        tr.appendChild(el('td', 'num', 'after ' + r.after));
        tr.appendChild(el('td', 'num', '+' + dur(r.at)));
        tr.appendChild(el('td', null, r.from + ' → ' + r.to + ' (REJECTED)'));
        tr.appendChild(el('td', 'num', ''));
        tr.appendChild(el('td', null, r.desc));
        tr.appendChild(el('td', 'data', 'allowed: ' + (r.allowed || 'nothing')));
      }
      body.appendChild(tr);
    });
    count.textContent = ' ' + Math.min(limit, list.length) + ' of ' + list.length + ' shown';
    more.hidden = list.length <= limit;
    more.textContent = 'Show all ' + list.length;
  }
  select.addEventListener('change', function () { limit = MOVE_ROWS; fill(); });
  more.addEventListener('click', function () { limit = Infinity; fill(); });
  fill();
  return root;
}

function runPage() {
  document.getElementById('run-view').appendChild(runView(D.runs[0]));
}

// The batch's run table: sortable, filterable, one page of rows at a time; a row opens that run.
function batchPage() {
  var rows = D.rows.map(function (r, i) { return { i: i, run: r[0], id: r[1], outcome: r[2], cost: r[3], llm: r[4], tools: r[5], ms: r[6], final: r[7], note: r[8], uncertain: r[9] || 0, released: r[10] || 0, unpriced: r[11] || 0 }; });
  var cols = [
    { key: 'id', label: 'run', text: function (r) { return r.id; } },
    { key: 'outcome', label: 'outcome', text: function (r) { return r.outcome; } },
    { key: 'cost', label: 'cost', num: true, text: function (r) { return costCell(r); } },
    { key: 'llm', label: 'LLM calls', num: true, text: function (r) { return String(r.llm); } },
    { key: 'tools', label: 'tool calls', num: true, text: function (r) { return String(r.tools); } },
    { key: 'ms', label: 'duration', num: true, text: function (r) { return dur(r.ms); } },
    { key: 'final', label: 'final state', text: function (r) { return r.final; } },
  ];
  var sortKey = null, sortDir = 1, page = 0, view = rows;
  var table = document.getElementById('runs');
  var head = table.querySelector('thead tr');
  var body = table.querySelector('tbody');
  var info = document.getElementById('runs-info');
  var prev = document.getElementById('runs-prev');
  var next = document.getElementById('runs-next');
  var search = document.getElementById('runs-search');
  var outcome = document.getElementById('runs-outcome');
  var ths = cols.map(function (c) {
    var th = el('th', c.num ? 'num' : null);
    var b = el('button', 'sort', c.label);
    b.type = 'button';
    b.setAttribute('data-key', c.key);
    b.addEventListener('click', function () {
      if (sortKey === c.key) sortDir = -sortDir; else { sortKey = c.key; sortDir = c.num ? -1 : 1; }
      page = 0;
      apply();
    });
    th.appendChild(b);
    th.setAttribute('aria-sort', 'none');
    head.appendChild(th);
    return th;
  });
  function apply() {
    var q = search.value.toLowerCase(), o = outcome.value;
    view = rows.filter(function (r) { return (o === '' || r.outcome === o) && (q === '' || r.id.toLowerCase().indexOf(q) >= 0); });
    if (sortKey !== null) {
      var k = sortKey;
      view.sort(function (a, b) {
        var x = a[k], y = b[k];
        var c = typeof x === 'number' ? x - y : (x < y ? -1 : x > y ? 1 : 0);
        return c * sortDir || a.i - b.i;
      });
    }
    cols.forEach(function (c, i) { ths[i].setAttribute('aria-sort', c.key === sortKey ? (sortDir > 0 ? 'ascending' : 'descending') : 'none'); });
    render();
  }
  function render() {
    var pages = Math.max(1, Math.ceil(view.length / PAGE));
    if (page >= pages) page = pages - 1;
    body.textContent = '';
    view.slice(page * PAGE, page * PAGE + PAGE).forEach(function (r) {
      var tr = el('tr', 'o-' + r.outcome.replace(/[^a-z_]/g, ''));
      tr.setAttribute('data-index', String(r.i));
      tr.tabIndex = 0;
      cols.forEach(function (c) { tr.appendChild(el('td', c.num ? 'num' : null, c.text(r))); });
      // A run that went on after a crash: its note opens with the mark (renderBatchPage's resumedMark).
      if (/^resumed after a crash/.test(r.note)) {
        var badge = el('span', 'resumed', 'resumed');
        badge.title = r.note;
        tr.firstChild.appendChild(badge);
      }
      var open = function () { location.hash = 'run-' + r.i; };
      tr.addEventListener('click', open);
      tr.addEventListener('keydown', function (e) { if (e.key === 'Enter') open(); });
      body.appendChild(tr);
    });
    info.textContent = view.length === 0 ? 'no runs match' : 'runs ' + (page * PAGE + 1) + '–' + Math.min(view.length, page * PAGE + PAGE) + ' of ' + view.length + ' (page ' + (page + 1) + ' of ' + pages + ')';
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }
  prev.addEventListener('click', function () { page--; render(); });
  next.addEventListener('click', function () { page++; render(); });
  search.addEventListener('input', function () { page = 0; apply(); });
  outcome.addEventListener('change', function () { page = 0; apply(); });
  apply();

  var listView = document.getElementById('batch-view');
  var runView_ = document.getElementById('run-view');
  function route() {
    var m = /^#run-(\d+)$/.exec(location.hash);
    var row = m ? rows[Number(m[1])] : undefined;
    if (!row) { runView_.hidden = true; listView.hidden = false; return; }
    listView.hidden = true;
    runView_.hidden = false;
    runView_.textContent = '';
    var back = el('button', 'back', '← all runs');
    back.type = 'button';
    back.addEventListener('click', function () { location.hash = ''; });
    runView_.appendChild(back);
    runView_.appendChild(el('h2', 'run-title', 'Run ' + row.id));
    runView_.appendChild(el('p', 'facts', row.outcome + ' · ' + money(row) + ' · ' + row.llm + ' LLM calls · ' + row.tools + ' tool calls · ' + dur(row.ms) + ' · final state ' + (row.final || '—')));
    if (row.note) runView_.appendChild(el('p', 'why', row.note));
    if (row.run < 0) runView_.appendChild(el('p', 'hint', 'No history was recorded for this run.'));
    else runView_.appendChild(runView(D.runs[row.run]));
    window.scrollTo(0, 0);
  }
  window.addEventListener('hashchange', route);
  route();
}

if (D.page === 'run') runPage(); else batchPage();
})();
`;
