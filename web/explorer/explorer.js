// Membrane lineage explorer: plain JavaScript over the GraphQL API, no
// build step. It draws a record's lineage and neighbourhood with the
// vendored Cytoscape.js, reads the audit timeline, re-queries with asOf
// from a slider, and follows the recordChanged subscription over SSE
// (fetch streaming: EventSource cannot send the Authorization header).
//
// It is an ordinary client: every request carries the API key the user
// gave (kept in sessionStorage, so it leaves with the tab), and sees only
// what that key may see. A redacted record is drawn as redacted: the API
// sends no payload for it, and none is shown.
'use strict';

(function () {
  const ENDPOINT = new URL('/graphql', window.location.href).toString();
  const KEY_STORAGE = 'membrane.explorer.apiKey';
  // Nodes drawn at most: a bound on the query's cost (a reader's key must
  // be able to run it at depth 100) and on what a browser draws smoothly.
  const NODE_LIMIT = 200;
  // The change feed takes at most 100 ids a filter; a larger graph
  // follows every change it may see and keeps those of its records.
  const MAX_FILTER_IDS = 100;
  // graph walks at most this many hops; lineage, deeper views, 100.
  const MAX_GRAPH_HOPS = 10;
  const LINEAGE_PREDICATES = ['SUPERSEDES', 'DERIVED_FROM', 'CONTESTED_BY'];
  const ALL_PREDICATES = LINEAGE_PREDICATES.concat(['SUPPORTS', 'CONTRADICTS', 'DEPENDS_ON', 'USES', 'MENTIONS',
    'ABOUT', 'REFERENCES', 'CAUSED_BY', 'RELATED_TO', 'NEXT']);
  const PREDICATE_COLOURS = {
    SUPERSEDES: '#7048e8', DERIVED_FROM: '#1c7ed6', CONTESTED_BY: '#e8590c', SUPPORTS: '#2b8a3e',
    CONTRADICTS: '#c92a2a', DEPENDS_ON: '#5f3dc4', USES: '#0b7285', MENTIONS: '#868e96', ABOUT: '#a61e4d',
    REFERENCES: '#495057', CAUSED_BY: '#d9480f', RELATED_TO: '#364fc7', NEXT: '#099268',
  };
  const STATUS_COLOURS = { ACTIVE: '#b2f2bb', CONTESTED: '#ffd8a8', RETRACTED: '#ffc9c9', SUPERSEDED: '#d0bfff' };
  const SENSITIVITY_BORDERS = { PUBLIC: '#adb5bd', LOW: '#868e96', MEDIUM: '#1c7ed6', HIGH: '#f08c00', HYPER: '#c92a2a' };

  const RECORD_FIELDS = `id caption type status sensitivity redacted confidence salience scope tags createdAt updatedAt version
    payload { __typename
      ... on SemanticPayload { subject predicate object }
      ... on EpisodicPayload { sessionId outcome timeline { eventKind summary } }
      ... on WorkingPayload { threadId state contextSummary }
      ... on CompetencePayload { skillName }
      ... on PlanGraphPayload { planId intent }
      ... on EntityPayload { canonicalName primaryType summary }
    }`;

  // graph for views up to its hop limit, lineage (up to 100 deep) beyond.
  const GRAPH_QUERY = `query Graph($roots: [ID!]!, $hops: Int, $preds: [RelationPredicate!], $asOf: DateTime, $limit: Int) {
    graph(roots: $roots, hops: $hops, predicates: $preds, direction: BOTH, asOf: $asOf, limit: $limit) {
      nodes { depth record { ${RECORD_FIELDS} } }
      edges { id predicate sourceId targetId weight createdAt actor }
      truncated
    }
  }`;
  const LINEAGE_QUERY = `query Lineage($id: ID!, $hops: Int, $preds: [RelationPredicate!], $asOf: DateTime, $limit: Int) {
    lineage(id: $id, direction: BOTH, predicates: $preds, maxDepth: $hops, limit: $limit, asOf: $asOf) {
      nodes { depth record { ${RECORD_FIELDS} } }
      edges { id predicate sourceId targetId weight createdAt actor }
      truncated
    }
  }`;
  const SEARCH_QUERY = `query Search($filter: RecordFilter) {
    records(filter: $filter, first: 25) { nodes { ${RECORD_FIELDS} } }
  }`;
  const RECORD_QUERY = `query Record($id: ID!) { record(id: $id) { ${RECORD_FIELDS} } }`;
  const AUDIT_QUERY = `query Audit($id: ID!, $after: String) {
    record(id: $id) { id redacted createdAt auditLog(first: 50, after: $after) {
      nodes { id action actor actorDetail timestamp rationale related { role recordId predicate } }
      pageInfo { hasNextPage endCursor } } }
  }`;
  const CURSOR_QUERY = 'query Cursor { changeCursor }';
  const CHANGES_SUBSCRIPTION = `subscription Changes($filter: ChangeFilter, $after: String) {
    recordChanged(filter: $filter, after: $after) { cursor recordId action timestamp redacted }
  }`;

  const $ = (id) => document.getElementById(id);
  const state = {
    rootId: null, depth: 2, edges: 'all',
    asOf: null, // null: now (live)
    asOfMin: null, // the selected record's oldest audit time
    selectedId: null,
    records: new Map(), // id -> record drawn
    cursor: null,
    live: null, // AbortController of the subscription
    liveIds: '',
    reloadTimer: null,
    loadSeq: 0,
  };
  let cy = null;

  // ---- API ------------------------------------------------------------

  class APIError extends Error {
    constructor(message, code) { super(message); this.code = code; }
  }

  function apiKey() { return window.sessionStorage.getItem(KEY_STORAGE) || ''; }

  function headers(accept) {
    const h = { 'Content-Type': 'application/json', Accept: accept || 'application/json' };
    const key = apiKey();
    if (key) h.Authorization = 'Bearer ' + key;
    return h;
  }

  async function gql(query, variables, signal) {
    let res;
    try {
      res = await fetch(ENDPOINT, { method: 'POST', headers: headers(), body: JSON.stringify({ query, variables }), signal });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new APIError('the server did not answer', 'NETWORK');
    }
    let body;
    try { body = await res.json(); } catch (e) { throw new APIError('HTTP ' + res.status, 'HTTP'); }
    if (body.errors && body.errors.length) {
      const e = body.errors[0];
      const code = (e.extensions && e.extensions.code) || 'ERROR';
      if (code === 'UNAUTHENTICATED') askKey(e.message);
      throw new APIError(e.message, code);
    }
    return body.data;
  }

  // ---- key -------------------------------------------------------------

  function askKey(reason) {
    const d = $('key-dialog');
    if (d.open) return;
    if (reason) setStatus(reason, true);
    $('key-input').value = apiKey();
    d.showModal();
  }

  $('key-button').addEventListener('click', () => askKey());
  $('key-form').addEventListener('submit', (ev) => {
    const clear = ev.submitter && ev.submitter.value === 'clear';
    const v = clear ? '' : $('key-input').value.trim();
    if (v) window.sessionStorage.setItem(KEY_STORAGE, v); else window.sessionStorage.removeItem(KEY_STORAGE);
    $('key-input').value = '';
    stopLive();
    if (state.rootId) load(); else search($('search').value);
  });

  // ---- status and rendering helpers -----------------------------------

  function setStatus(text, error) {
    const s = $('status');
    s.textContent = text || '';
    s.classList.toggle('error', !!error);
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else if (k.startsWith('data-')) e.setAttribute(k, v); else e[k] = v;
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }

  function shorten(s, n) { s = String(s == null ? '' : s); return s.length > n ? s.slice(0, n - 1) + '…' : s; }

  // caption is the server's label of a record (Record.caption: for a
  // redacted record, its type only).
  function caption(r) { return r.caption || r.type.toLowerCase(); }

  function badges(r) {
    const out = [el('span', { class: 'badge ' + r.status }, r.status), el('span', { class: 'badge' }, r.type),
      el('span', { class: 'badge' }, r.sensitivity)];
    if (r.redacted) out.push(el('span', { class: 'badge redacted' }, 'REDACTED'));
    return out;
  }

  // ---- search ------------------------------------------------------------

  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

  async function search(text) {
    text = (text || '').trim();
    const list = $('results');
    setStatus('Searching…');
    try {
      let records;
      if (UUID.test(text)) {
        records = [(await gql(RECORD_QUERY, { id: text })).record];
      } else {
        const filter = text ? { text } : null;
        records = (await gql(SEARCH_QUERY, { filter })).records.nodes;
      }
      list.replaceChildren(...records.map((r) => {
        const li = el('li', { tabIndex: 0, 'data-id': r.id }, el('div', {}, shorten(caption(r), 60)), el('div', {}, ...badges(r)));
        li.addEventListener('click', () => open(r.id));
        li.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') open(r.id); });
        return li;
      }));
      setStatus(records.length ? records.length + ' record(s)' : 'No record matches.');
    } catch (e) {
      list.replaceChildren();
      setStatus(e.message, true);
    }
  }

  $('search-form').addEventListener('submit', (ev) => { ev.preventDefault(); search($('search').value); });

  // ---- navigation: the hash holds the view, so a link reopens it ---------

  function open(id) {
    const p = new URLSearchParams({ record: id, depth: String(state.depth), edges: state.edges });
    window.location.hash = p.toString();
  }

  function readHash() {
    const p = new URLSearchParams(window.location.hash.slice(1));
    const id = p.get('record');
    const depth = parseInt(p.get('depth') || '', 10);
    if (depth > 0) {
      state.depth = depth;
      if (![...$('depth').options].some((o) => o.value === String(depth))) $('depth').append(el('option', {}, String(depth)));
      $('depth').value = String(depth);
    }
    if (p.get('edges') === 'lineage' || p.get('edges') === 'all') { state.edges = p.get('edges'); $('edges').value = state.edges; }
    if (id && id !== state.rootId) {
      state.rootId = id;
      state.selectedId = id;
      state.asOf = null;
      state.asOfMin = null;
      $('asof').value = $('asof').max;
      $('asof-text').textContent = 'now';
      $('asof').disabled = true;
      loadTimeline(id, true);
    }
    if (id) load();
  }

  window.addEventListener('hashchange', readHash);
  $('depth').addEventListener('change', () => { state.depth = parseInt($('depth').value, 10); if (state.rootId) open(state.rootId); });
  $('edges').addEventListener('change', () => { state.edges = $('edges').value; if (state.rootId) open(state.rootId); });

  // ---- the graph ------------------------------------------------------------

  // fetchGraph reads the graph around id: through graph up to its hop
  // limit, through lineage (which walks up to 100 deep) beyond it.
  async function fetchGraph(id, asOf) {
    const vars = { hops: state.depth, preds: state.edges === 'lineage' ? LINEAGE_PREDICATES : ALL_PREDICATES, asOf, limit: NODE_LIMIT };
    if (state.depth <= MAX_GRAPH_HOPS) return (await gql(GRAPH_QUERY, Object.assign({ roots: [id] }, vars))).graph;
    return (await gql(LINEAGE_QUERY, Object.assign({ id }, vars))).lineage;
  }

  async function load() {
    const seq = ++state.loadSeq;
    const id = state.rootId;
    const g = $('graph');
    g.dataset.state = 'loading';
    setStatus('Loading…');
    try {
      // The change feed's position before the read: no change after the
      // read is missed by the subscription that starts from it.
      if (state.asOf === null) state.cursor = (await gql(CURSOR_QUERY, {})).changeCursor;
      const graph = await fetchGraph(id, state.asOf);
      if (seq !== state.loadSeq) return; // a newer load superseded this one
      draw(graph, id);
      const n = graph.nodes.length;
      setStatus(n + ' record(s), ' + graph.edges.length + ' edge(s)' + (graph.truncated ? ' (truncated at ' + NODE_LIMIT + ')' : '') +
        (state.asOf ? ' as of ' + new Date(state.asOf).toLocaleString() : ''));
      g.dataset.state = 'ready';
      if (state.asOf === null) startLive(); else stopLive();
    } catch (e) {
      if (seq !== state.loadSeq) return;
      if (e.code === 'NOT_FOUND' && state.asOf) {
        draw({ nodes: [], edges: [] }, id);
        stopLive();
        setStatus('The record did not exist yet at ' + new Date(state.asOf).toLocaleString() + '.');
        g.dataset.state = 'ready';
        return;
      }
      g.dataset.state = 'error';
      setStatus(e.message, true);
    }
  }

  function nodeElement(r, depth, root) {
    return {
      group: 'nodes',
      data: { id: r.id, label: shorten(caption(r), 40) + '\n' + r.type.toLowerCase() + ' · ' + (r.redacted ? 'REDACTED' : r.status),
        status: r.status, type: r.type, sensitivity: r.sensitivity, redacted: r.redacted, depth },
      classes: [r.redacted ? 'redacted' : '', root ? 'root' : '', 'status-' + r.status].join(' ').trim(),
    };
  }

  function draw(graph, rootId) {
    if (!cy) cy = cytoscape({ container: $('graph'), style: graphStyle(), wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 3 });
    state.records = new Map(graph.nodes.map((n) => [n.record.id, n.record]));
    const els = graph.nodes.map((n) => nodeElement(n.record, n.depth, n.record.id === rootId));
    for (const e of graph.edges) {
      if (!state.records.has(e.sourceId) || !state.records.has(e.targetId)) continue;
      els.push({ group: 'edges', data: { id: e.id, source: e.sourceId,
        target: e.targetId, predicate: e.predicate, colour: PREDICATE_COLOURS[e.predicate] || '#495057' } });
    }
    cy.batch(() => { cy.elements().remove(); cy.add(els); });
    cy.layout({ name: 'breadthfirst', directed: false, roots: cy.getElementById(rootId), spacingFactor: 1.1, animate: false }).run();
    cy.fit(undefined, 30);
    // A long lineage fitted whole is unreadable: show the root at a
    // readable zoom instead (the rest is a pan or a scroll away).
    if (cy.zoom() < 0.35) { cy.zoom(0.6); cy.center(cy.getElementById(rootId)); }
    const g = $('graph');
    g.dataset.nodes = String(cy.nodes().length);
    g.dataset.edges = String(cy.edges().length);
    g.dataset.redacted = String(cy.nodes('.redacted').length);
    g.dataset.asOf = state.asOf || '';
    drawLegend(graph);
    if (state.selectedId && state.records.has(state.selectedId)) showDetails(state.records.get(state.selectedId));
  }

  function graphStyle() {
    return [
      { selector: 'node', style: {
        label: 'data(label)', 'text-wrap': 'wrap', 'text-max-width': 180, 'font-size': 10, 'text-valign': 'center',
        'text-halign': 'center', shape: 'round-rectangle', width: 190, height: 44, 'background-color': '#e9ecef',
        'border-width': 2, 'border-color': '#868e96' } },
      ...Object.entries(STATUS_COLOURS).map(([s, c]) => ({ selector: 'node[status = "' + s + '"]', style: { 'background-color': c } })),
      ...Object.entries(SENSITIVITY_BORDERS).map(([s, c]) => ({ selector: 'node[sensitivity = "' + s + '"]', style: { 'border-color': c } })),
      { selector: 'node.redacted', style: { 'background-color': '#343a40', color: '#f8f9fa', 'border-style': 'dashed', 'border-width': 3 } },
      { selector: 'node.root', style: { 'border-width': 4 } },
      { selector: 'node:selected', style: { 'overlay-color': '#1c7ed6', 'overlay-opacity': 0.2 } },
      { selector: 'edge', style: {
        'curve-style': 'bezier', width: 2, 'line-color': 'data(colour)', 'target-arrow-color': 'data(colour)',
        'target-arrow-shape': 'triangle', label: 'data(predicate)', 'font-size': 8, 'text-rotation': 'autorotate',
        'text-background-color': '#fff', 'text-background-opacity': 0.8 } },
    ];
  }

  function drawLegend(graph) {
    const preds = [...new Set(graph.edges.map((e) => e.predicate))].sort();
    const statuses = [...new Set(graph.nodes.map((n) => n.record.status))].sort();
    $('legend').replaceChildren(
      ...preds.map((p) => el('span', {}, el('span', { class: 'swatch' }), p)),
      ...statuses.map((s) => el('span', { class: 'badge ' + s }, s)),
      ...(graph.nodes.some((n) => n.record.redacted) ? [el('span', { class: 'badge redacted' }, 'REDACTED: payload withheld')] : []),
    );
    // Swatch colours through the CSSOM, which a strict style-src allows.
    [...$('legend').querySelectorAll('.swatch')].forEach((s, i) => { s.style.background = PREDICATE_COLOURS[preds[i]] || '#495057'; });
  }

  // ---- details and audit timeline -------------------------------------------

  function showDetails(r) {
    const rows = [['id', r.id], ['type', r.type], ['status', r.status], ['sensitivity', r.sensitivity], ['version', r.version],
      ['confidence', r.confidence], ['salience', r.salience], ['scope', r.scope || '(unscoped)'], ['tags', (r.tags || []).join(', ')],
      ['created', r.createdAt], ['updated', r.updatedAt]];
    const dl = el('dl', {}, ...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))]));
    const body = r.redacted
      ? el('p', { class: 'redacted-note' }, el('span', { class: 'badge redacted' }, 'REDACTED'),
        'Above this key\'s ceiling: no payload, provenance or audit trail.')
      : el('pre', {}, JSON.stringify(r.payload, (k, v) => (k === '__typename' ? undefined : v), 2));
    const openBtn = el('button', { type: 'button' }, 'Centre on this record');
    openBtn.addEventListener('click', () => open(r.id));
    $('details').replaceChildren(el('p', {}, el('strong', {}, caption(r))), el('div', {}, ...badges(r)), dl, body,
      ...(r.id === state.rootId ? [] : [openBtn]));
  }

  async function loadTimeline(id, setRange) {
    const list = $('timeline');
    list.replaceChildren(el('li', { class: 'muted' }, 'Loading…'));
    try {
      const entries = [];
      let after = null;
      let rec;
      // Every page, up to a bound: the slider's range starts at the first.
      for (let i = 0; i < 10; i++) {
        rec = (await gql(AUDIT_QUERY, { id, after })).record;
        entries.push(...rec.auditLog.nodes);
        if (!rec.auditLog.pageInfo.hasNextPage) break;
        after = rec.auditLog.pageInfo.endCursor;
      }
      if (id !== state.selectedId) return;
      list.replaceChildren(...(rec.redacted
        ? [el('li', { class: 'muted' }, 'Redacted: its audit trail is not shown to this key.')]
        : entries.map((a) => el('li', { 'data-action': a.action },
          el('time', { dateTime: a.timestamp }, new Date(a.timestamp).toLocaleString()),
          el('strong', {}, a.action), ' by ', a.actor, a.actorDetail ? ' (' + a.actorDetail + ')' : '',
          a.rationale ? el('div', { class: 'muted' }, a.rationale) : null,
          ...(a.related || []).map((ref) => el('div', { class: 'muted' }, ref.role + ' ' + ref.recordId + (ref.predicate ? ' (' + ref.predicate + ')' : '')))))));
      if (setRange) {
        state.asOfMin = entries.length ? entries[0].timestamp : rec.createdAt;
        $('asof').disabled = false;
      }
    } catch (e) {
      list.replaceChildren(el('li', { class: 'muted' }, e.message));
    }
  }

  // ---- asOf slider -------------------------------------------------------------

  // The slider's value v in [0, max] is the instant min + v/max of the way
  // to now; max itself is now, the live view.
  function sliderInstant() {
    const s = $('asof');
    const v = Number(s.value), max = Number(s.max);
    if (v >= max || !state.asOfMin) return null;
    // A Date holds milliseconds and the server's times nanoseconds: the
    // next millisecond, so that the left end is at or after the creation.
    const lo = Date.parse(state.asOfMin) + 1;
    return new Date(lo + (Date.now() - lo) * v / max).toISOString();
  }

  $('asof').addEventListener('input', () => {
    const t = sliderInstant();
    $('asof-text').textContent = t ? new Date(t).toLocaleString() : 'now';
  });
  $('asof').addEventListener('change', () => {
    state.asOf = sliderInstant();
    $('asof-text').textContent = state.asOf ? new Date(state.asOf).toLocaleString() : 'now';
    if (state.rootId) load();
  });

  // ---- live updates ------------------------------------------------------------

  function setLive(text, cls) {
    const l = $('live');
    l.textContent = 'live: ' + text;
    l.className = 'live ' + cls;
  }

  function stopLive() {
    if (state.live) state.live.abort();
    state.live = null;
    state.liveIds = '';
    setLive('off', 'off');
  }

  // startLive follows recordChanged from the cursor read before the graph:
  // a change to a drawn record reloads the graph (a supersede brings in its
  // successor). Only the live view follows changes; a view asOf is history.
  function startLive() {
    const ids = [...state.records.keys()].sort();
    const filtered = ids.length > 0 && ids.length <= MAX_FILTER_IDS;
    const key = filtered ? ids.join(',') : '*';
    if (state.live && state.liveIds === key) return;
    if (state.live) state.live.abort();
    const ctl = new AbortController();
    state.live = ctl;
    state.liveIds = key;
    subscribe(ctl, filtered ? { ids } : null, 0);
  }

  async function subscribe(ctl, filter, failures) {
    setLive('connecting', 'off');
    try {
      const res = await fetch(ENDPOINT, {
        method: 'POST', headers: headers('text/event-stream'), signal: ctl.signal,
        body: JSON.stringify({ query: CHANGES_SUBSCRIPTION, variables: { filter, after: state.cursor } }),
      });
      if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
      setLive('on', 'on');
      $('graph').dataset.live = 'on';
      failures = 0;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          onEvent(block);
        }
      }
    } catch (e) {
      if (ctl.signal.aborted) return;
      failures++;
    }
    if (ctl.signal.aborted) return;
    // The stream ended (a server shutting down ends every subscription):
    // resume from the last cursor, backing off while it keeps failing.
    $('graph').dataset.live = 'off';
    setLive('reconnecting', failures ? 'error' : 'off');
    window.setTimeout(() => { if (!ctl.signal.aborted) subscribe(ctl, filter, failures); }, Math.min(30000, 500 * 2 ** failures));
  }

  function onEvent(block) {
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (event !== 'next' || !data.length) return;
    let msg;
    try { msg = JSON.parse(data.join('\n')); } catch (e) { return; }
    if (msg.errors && msg.errors.length) { setLive(msg.errors[0].message, 'error'); return; }
    const ch = msg.data && msg.data.recordChanged;
    if (!ch) return;
    state.cursor = ch.cursor;
    if (!state.records.has(ch.recordId) || state.asOf !== null) return;
    // Changes come in bursts (a supersede changes two records): one reload.
    window.clearTimeout(state.reloadTimer);
    state.reloadTimer = window.setTimeout(() => {
      load();
      if (state.selectedId) loadTimeline(state.selectedId, false);
    }, 150);
  }

  // ---- start ---------------------------------------------------------------------

  function bindGraphEvents() {
    if (!cy) return;
    cy.on('tap', 'node', (ev) => {
      const id = ev.target.id();
      state.selectedId = id;
      showDetails(state.records.get(id));
      loadTimeline(id, false);
    });
  }

  cy = cytoscape({ container: $('graph'), style: graphStyle(), wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 3 });
  bindGraphEvents();
  // For scripts and tests: the Cytoscape instance and the view's state.
  window.membraneExplorer = { cy: () => cy, state };
  if (window.location.hash) readHash(); else search('');
})();
