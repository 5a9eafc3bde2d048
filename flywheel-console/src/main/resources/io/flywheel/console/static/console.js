// Flywheel console: small vanilla script, no build step. Each page's drawing reads the JSON API and
// renders SVG; the tables and facts are already in the HTML.
'use strict';
const SVGNS = 'http://www.w3.org/2000/svg';

function el(tag, attrs, parent, text) {
  const e = tag === 'svg' || ['g', 'line', 'circle', 'rect', 'path', 'polyline', 'text', 'title'].includes(tag)
    ? document.createElementNS(SVGNS, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

async function getJson(url) {
  const r = await fetch(url);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || ('HTTP ' + r.status));
  return body;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
function fmt(x, d) { return x === null || x === undefined ? '-' : Number(x).toFixed(d); }
const enc = encodeURIComponent;

// ------------------------------------------------------------------ episode page
async function episodePage() {
  const id = document.body.dataset.episode;
  const viewer = document.getElementById('viewer');
  const cameras = JSON.parse(viewer.dataset.cameras || '[]');
  const count = Number(viewer.dataset.frames || 0);
  const frames = [];
  for (let off = 0; off < count && off < 20000; off += 1000) {
    const page = await getJson(`/api/episodes/${enc(id)}/frames?offset=${off}&limit=1000`);
    frames.push(...page.frames);
    if (page.frames.length === 0) break;
  }
  const img = document.getElementById('frame-image');
  const label = document.getElementById('frame-label');
  const scrub = document.getElementById('scrubber');
  const strip = document.getElementById('strip');
  const picker = document.getElementById('camera-picker');
  let camera = 0;
  let current = 0;
  scrub.max = Math.max(0, frames.length - 1);
  const t0 = frames.length ? frames[0].timestamp_ns : 0;
  const secs = f => (f.timestamp_ns - t0) / 1e9;

  cameras.forEach((c, i) => {
    const b = el('button', {type: 'button', 'data-camera': i, class: i === 0 ? 'on' : ''}, picker, c.topic);
    b.addEventListener('click', () => {
      camera = i;
      picker.querySelectorAll('button').forEach(x => x.classList.toggle('on', x === b));
      buildStrip();
      show(current);
    });
  });
  if (cameras.length === 0) picker.textContent = 'no camera in this episode';

  const stripStep = Math.max(1, Math.ceil(frames.length / 24));
  function buildStrip() {
    clear(strip);
    if (cameras.length === 0) return;
    for (let i = 0; i < frames.length; i += stripStep) {
      const t = el('img', {src: `/api/episodes/${enc(id)}/frames/${frames[i].frame_index}/image?camera=${camera}&thumb=96`,
        'data-frame': frames[i].frame_index, alt: 'frame ' + frames[i].frame_index}, strip);
      t.addEventListener('click', () => show(i));
    }
  }

  const cursors = [];
  function show(i) {
    if (frames.length === 0) { label.textContent = 'no frames'; return; }
    current = Math.max(0, Math.min(frames.length - 1, i));
    const f = frames[current];
    scrub.value = current;
    if (cameras.length) img.src = `/api/episodes/${enc(id)}/frames/${f.frame_index}/image?camera=${camera}`;
    const flags = (f.flags || []).join(', ');
    label.innerHTML = '';
    el('div', {id: 'frame-index'}, label, `frame ${f.frame_index} / ${frames.length}`);
    el('div', {}, label, `t = ${secs(f).toFixed(3)} s`);
    if (f.gripper !== null && f.gripper !== undefined) el('div', {}, label, `gripper ${fmt(f.gripper, 3)}`);
    if (f.phase) el('div', {}, label, `phase ${f.phase}`);
    el('div', {class: flags ? 'error' : ''}, label, flags ? 'flags: ' + flags : 'no flags');
    strip.querySelectorAll('img').forEach(x => x.classList.toggle('on', Number(x.dataset.frame) === f.frame_index));
    for (const c of cursors) c.move(secs(f));
  }
  scrub.addEventListener('input', () => show(Number(scrub.value)));

  const span = frames.length ? Math.max(1e-9, secs(frames[frames.length - 1])) : 1;
  const W = 1000, L = 60, R = 20;
  const x = t => L + (W - L - R) * t / span;

  // timeline: one tick per frame, flagged frames in red, click to seek
  const tl = document.getElementById('timeline');
  tl.setAttribute('viewBox', `0 0 ${W} 46`);
  el('text', {x: 4, y: 26}, tl, 'frames');
  frames.forEach((f, i) => {
    const bad = f.flags && f.flags.length > 0;
    const tick = el('line', {x1: x(secs(f)), x2: x(secs(f)), y1: 8, y2: 34, stroke: bad ? '#d62728' : '#2456a6',
      'stroke-width': bad ? 2 : 1, class: bad ? 'flagged' : 'tick'}, tl);
    tick.addEventListener('click', () => show(i));
  });
  el('text', {x: L, y: 44}, tl, '0 s');
  el('text', {x: W - R - 40, y: 44}, tl, span.toFixed(2) + ' s');
  cursors.push(cursor(tl, 46));

  function cursor(svg, h) {
    const line = el('line', {y1: 0, y2: h, stroke: '#e8590c', 'stroke-width': 2, class: 'cursor'}, svg);
    return {move: t => { line.setAttribute('x1', x(t)); line.setAttribute('x2', x(t)); }};
  }

  // plots sharing the time axis
  const plots = document.getElementById('plots');
  const series = [['state', f => f.state], ['action', f => f.action], ['gripper', f => f.gripper === null ? null : [f.gripper]]];
  // the names of the state / action values (episodes.state_names, action_names), shown as each line's title
  const valueNames = {state: JSON.parse(viewer.dataset.stateNames || 'null') || [],
    action: JSON.parse(viewer.dataset.actionNames || 'null') || []};
  const colours = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#86bcb6', '#e15759'];
  for (const [name, get] of series) {
    const dims = frames.reduce((m, f) => Math.max(m, (get(f) || []).length), 0);
    if (dims === 0) continue;
    let lo = Infinity, hi = -Infinity;
    frames.forEach(f => (get(f) || []).forEach(v => { if (v !== null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }));
    if (!(hi > lo)) { hi = lo + 1; lo = lo - 1; }
    const H = 120;
    const svg = el('svg', {class: 'chart plot', id: 'plot-' + name, viewBox: `0 0 ${W} ${H}`}, plots);
    el('text', {x: 4, y: 14}, svg, `${name} (${dims})`);
    el('text', {x: 4, y: 30}, svg, hi.toPrecision(3));
    el('text', {x: 4, y: H - 4}, svg, lo.toPrecision(3));
    const y = v => 8 + (H - 16) * (1 - (v - lo) / (hi - lo));
    for (let d = 0; d < dims; d++) {
      const pts = [];
      frames.forEach(f => { const v = (get(f) || [])[d]; if (v !== null && v !== undefined && isFinite(v)) pts.push(`${x(secs(f)).toFixed(1)},${y(v).toFixed(1)}`); });
      const line = el('polyline', {points: pts.join(' '), fill: 'none', stroke: colours[d % colours.length], 'stroke-width': 1.3,
        class: 'series', 'data-dim': d}, svg);
      const names = valueNames[name] || [];
      if (names.length === dims) el('title', {}, line, names[d]);
    }
    cursors.push(cursor(svg, H));
  }
  buildStrip();
  show(0);
  document.body.dataset.ready = 'true';
}

// ------------------------------------------------------------------ alignment page
async function alignPage() {
  const id = document.body.dataset.episode;
  const form = document.getElementById('align-form');
  const summary = document.getElementById('align-summary');
  const svg = document.getElementById('align-svg');
  const streamSel = document.getElementById('stream');
  let seq = 0;
  async function recompute() {
    const my = ++seq;
    const p = new URLSearchParams();
    if (streamSel.value) p.set('stream', streamSel.value);
    p.set('method', document.getElementById('method').value);
    p.set('tolerance_ms', document.getElementById('tolerance').value);
    p.set('offset_ms', document.getElementById('offset').value);
    p.set('on_miss', document.getElementById('on-miss').value);
    p.set('from', document.getElementById('from').value);
    p.set('count', document.getElementById('count').value);
    summary.textContent = 'recomputing...';
    summary.classList.remove('error');
    let a;
    try {
      a = await getJson(`/api/episodes/${enc(id)}/align?${p}`);
    } catch (e) {
      if (my !== seq) return;
      summary.textContent = e.message;
      summary.classList.add('error');
      document.body.dataset.ready = 'true';
      document.body.dataset.computed = String(my);
      return;
    }
    if (my !== seq) return;
    if (streamSel.options.length === 0) {
      a.streams.forEach(s => el('option', {value: s}, streamSel, s));
      streamSel.value = a.stream;
    }
    const s = a.summary;
    summary.textContent = `${a.stream} (${a.stream_role}) against ${a.master_topic}, ${a.policy.method} within ${a.policy.tolerance_ms} ms: `
      + `${s.frames} master frames, ${s.matched} matched, ${s.unmatched} without a message, ${s.dropped} dropped; `
      + `|residual| p50 ${fmt(s.p50_ms, 3)} ms, p99 ${fmt(s.p99_ms, 3)} ms, max ${fmt(s.max_ms, 3)} ms`;
    draw(a);
    document.body.dataset.ready = 'true';
    document.body.dataset.computed = String(my);
  }
  function draw(a) {
    clear(svg);
    const W = 1200, H = 220, L = 190, R = 20, yM = 60, yS = 160;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const mt = a.master_times_ns, st = a.stream_times_ns;
    const all = mt.concat(st);
    if (all.length === 0) return;
    let lo = Math.min(...all), hi = Math.max(...all);
    if (hi <= lo) hi = lo + 1;
    const x = t => L + (W - L - R) * (t - lo) / (hi - lo);
    el('text', {x: 4, y: yM + 4}, svg, a.master_topic.length > 30 ? '...' + a.master_topic.slice(-28) : a.master_topic);
    el('text', {x: 4, y: yS + 4}, svg, a.stream.length > 30 ? '...' + a.stream.slice(-28) : a.stream);
    el('line', {x1: L, x2: W - R, y1: yM, y2: yM, stroke: '#ccd'}, svg);
    el('line', {x1: L, x2: W - R, y1: yS, y2: yS, stroke: '#ccd'}, svg);
    el('text', {x: L, y: H - 6}, svg, `${(lo / 1e9).toFixed(3)} s`);
    el('text', {x: W - R - 60, y: H - 6}, svg, `${(hi / 1e9).toFixed(3)} s`);
    a.pairs.forEach((p, i) => {
      const t = mt[i];
      if (p.message >= 0) {
        const k = p.message - a.first_message;
        if (k >= 0 && k < st.length) {
          el('line', {x1: x(t), y1: yM, x2: x(st[k]), y2: yS, stroke: '#9aa5b8', 'stroke-width': 1, class: 'pair'}, svg);
        }
      }
    });
    st.forEach(t => el('circle', {cx: x(t), cy: yS, r: 2.5, fill: '#59a14f', class: 'message'}, svg));
    a.pairs.forEach((p, i) => {
      const miss = !p.kept || p.message < 0;
      const c = el('circle', {cx: x(mt[i]), cy: yM, r: miss ? 5 : 4, fill: miss ? '#d62728' : '#2456a6',
        class: miss ? 'frame miss' : 'frame', 'data-frame': p.frame}, svg);
      el('title', {}, c, `frame ${p.frame}` + (p.residual_ns === null ? ' - no message' : ` residual ${(p.residual_ns / 1e6).toFixed(3)} ms`)
        + (p.kept ? '' : ' (dropped)'));
    });
  }
  form.querySelectorAll('select, input').forEach(i => i.addEventListener('change', recompute));
  document.getElementById('recompute').addEventListener('click', recompute);
  await recompute();
}

// ------------------------------------------------------------------ map page
async function mapPage() {
  const status = document.getElementById('map-status');
  const svg = document.getElementById('map');
  const legend = document.getElementById('map-legend');
  const m = await getJson('/api/map');
  if (!m.enriched || m.points.length === 0) {
    status.textContent = 'not enriched yet: no episode has an embedding (run flywheel enrich)';
    document.body.dataset.ready = 'true';
    return;
  }
  status.textContent = `${m.points.length} of ${m.episodes_total} episodes` + (m.model ? ` (${m.model}, ${m.dimension}-d)` : '')
    + `; PC1 ${(100 * m.explained[0]).toFixed(1)}%, PC2 ${(100 * m.explained[1]).toFixed(1)}% of the variance`
    + (m.sample_stride > 1 ? `; every ${m.sample_stride}th episode drawn` : '');
  const W = 760, H = 600, P = 30;
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const xs = m.points.map(p => p.x), ys = m.points.map(p => p.y);
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  if (x1 <= x0) { x1 = x0 + 1; x0 -= 1; }
  if (y1 <= y0) { y1 = y0 + 1; y0 -= 1; }
  const X = v => P + (W - 2 * P) * (v - x0) / (x1 - x0);
  const Y = v => H - P - (H - 2 * P) * (v - y0) / (y1 - y0);
  el('text', {x: W / 2 - 20, y: H - 6}, svg, 'PC1');
  el('text', {x: 4, y: H / 2}, svg, 'PC2');
  for (const p of m.points) {
    const g = el('g', {class: 'point', 'data-episode': p.episode_id, 'data-scene': p.scene,
      'data-failure': p.failure, 'data-mined': p.mined}, svg);
    el('title', {}, g, `${p.episode_id}\nscene: ${p.scene || '(unknown)'}\noutcome: ${p.outcome || '(unknown)'}`
      + (p.mined ? `\nmined into ${m.mined_from}` : ''));
    el('circle', {cx: X(p.x), cy: Y(p.y), r: 6, fill: m.scenes[p.scene] || '#999'}, g);
    if (p.mined) el('circle', {cx: X(p.x), cy: Y(p.y), r: 9.5, fill: 'none', stroke: '#000', 'stroke-width': 1.6, class: 'mined'}, g);
    if (p.failure) {
      el('path', {d: `M${X(p.x) - 7},${Y(p.y) - 7}L${X(p.x) + 7},${Y(p.y) + 7}M${X(p.x) - 7},${Y(p.y) + 7}L${X(p.x) + 7},${Y(p.y) - 7}`,
        stroke: '#d62728', 'stroke-width': 2.4, class: 'failure'}, g);
    }
    g.addEventListener('click', () => { window.location.href = '/episodes/' + enc(p.episode_id); });
  }
  el('div', {}, legend, '').innerHTML = '<b>scene</b>';
  for (const [scene, colour] of Object.entries(m.scenes)) {
    const d = el('div', {class: 'legend-scene'}, legend);
    el('span', {class: 'sw', style: `background:${colour};display:inline-block;width:10px;height:10px;margin-right:6px`}, d);
    d.appendChild(document.createTextNode(scene || '(unknown)'));
  }
  el('div', {id: 'n-failures'}, legend, `red cross: failure (${m.points.filter(p => p.failure).length})`);
  el('div', {id: 'n-mined'}, legend, `black ring: mined${m.mined_from ? ' into ' + m.mined_from : ''} (${m.points.filter(p => p.mined).length})`);
  document.body.dataset.ready = 'true';
}

// ------------------------------------------------------------------ training sets page
function bars(svg, comp, labels) {
  // comp: dimension -> value -> [counts...]; one row per value, one bar per series
  clear(svg);
  const colours = ['#999999', '#2d6ec8'];
  const W = 1000, L = 260, BAR = 9;
  let y = 8;
  const totals = labels.map((_, s) => Object.values(comp)[0] ? Object.values(Object.values(comp)[0]).reduce((a, c) => a + c[s], 0) : 0);
  for (const [dim, values] of Object.entries(comp)) {
    y += 18;
    el('text', {x: 4, y, 'font-weight': 'bold'}, svg, dim);
    y += 6;
    for (const [value, counts] of Object.entries(values)) {
      el('text', {x: 14, y: y + BAR + 3}, svg, (value || '(unknown)').slice(0, 40));
      counts.forEach((c, s) => {
        const share = totals[s] ? c / totals[s] : 0;
        el('rect', {x: L, y: y + s * (BAR + 1), width: Math.max(0.5, (W - L - 80) * share), height: BAR, fill: colours[s % 2],
          class: 'bar', 'data-dim': dim, 'data-value': value, 'data-series': s, 'data-count': c}, svg);
        el('text', {x: L + (W - L - 80) * share + 4, y: y + s * (BAR + 1) + BAR}, svg, `${(100 * share).toFixed(1)}% (${c})`);
      });
      y += counts.length * (BAR + 1) + 6;
    }
  }
  svg.setAttribute('viewBox', `0 0 ${W} ${y + 10}`);
  svg.style.height = (y + 10) + 'px';
}

async function trainsetsPage() {
  const compTag = document.getElementById('comp-tag');
  if (!compTag) { document.body.dataset.ready = 'true'; return; }
  async function showSet(tag) {
    const s = await getJson('/api/trainsets/' + enc(tag));
    compTag.textContent = tag;
    const comp = {};
    for (const [d, vals] of Object.entries(s.composition)) {
      comp[d] = {};
      for (const [v, c] of Object.entries(vals)) comp[d][v] = [c];
    }
    bars(document.getElementById('composition'), comp, [tag]);
  }
  async function diff() {
    const from = document.getElementById('diff-from').value, to = document.getElementById('diff-to').value;
    const out = document.getElementById('diff-summary');
    try {
      const d = await getJson(`/api/trainset-diff?from=${enc(from)}&to=${enc(to)}`);
      out.classList.remove('error');
      out.textContent = `${d.from} (${d.from_count} episodes) -> ${d.to} (${d.to_count} episodes): +${d.added.length} / -${d.removed.length},`
        + ` ${d.kept} kept; hard-case share ${(100 * d.hard_share_from).toFixed(1)}% -> ${(100 * d.hard_share_to).toFixed(1)}% (${d.hard_case_rule})`;
      bars(document.getElementById('diff-chart'), d.composition, [d.from, d.to]);
      for (const [list, ids] of [['diff-added', d.added], ['diff-removed', d.removed]]) {
        const ul = document.getElementById(list);
        clear(ul);
        ids.forEach(id => { const li = el('li', {}, ul); el('a', {href: '/episodes/' + enc(id)}, li, id); });
      }
      document.getElementById('diff-png').href = `/api/trainset-diff.png?from=${enc(from)}&to=${enc(to)}`;
    } catch (e) {
      out.textContent = e.message;
      out.classList.add('error');
    }
    document.body.dataset.diffed = String(Number(document.body.dataset.diffed || 0) + 1);
  }
  document.querySelectorAll('a.tag').forEach(a => a.addEventListener('click', ev => { ev.preventDefault(); showSet(a.dataset.tag); }));
  document.getElementById('diff-button').addEventListener('click', diff);
  const tags = [...document.querySelectorAll('a.tag')].map(a => a.dataset.tag);
  await showSet(tags[tags.length - 1]);
  await diff();
  document.body.dataset.ready = 'true';
}

const pages = {episode: episodePage, align: alignPage, map: mapPage, trainsets: trainsetsPage};
const run = pages[document.body.dataset.page];
if (run) {
  run().catch(e => {
    const p = el('p', {class: 'error', id: 'script-error'}, document.querySelector('main'), 'error: ' + e.message);
    p.scrollIntoView();
    document.body.dataset.ready = 'true';
  });
} else {
  document.body.dataset.ready = 'true';
}
