// The dashboard: the overview, a session's page and the event
// log, over the REST API and its event stream. Routes live in the hash:
//   #/            standing sessions (pending approvals, then waiting ones, first)
//   #/work        work-item sessions
//   #/s/<name>    one standing session
//   #/events?...  the event log, with the filters of `the-loop events`

import {h, fill, when, badge, fold, stick, notice} from './dom.js';
import {get, post, onAuth, logout, errorText, v1} from './api.js';
import {connect} from './live.js';
import {approvalsPanel} from './approvals.js';

const view = document.getElementById('view');
const hint = document.getElementById('login-hint');
const conn = document.getElementById('conn');

// Who is listening to the stream right now: the current page's refresher.
let current = null; // {onEvent(ev), stop()}
let loggedIn = null;

onAuth((ok) => {
  if (ok === loggedIn) return;
  const again = ok && loggedIn === false; // a login in another tab
  loggedIn = ok;
  hint.hidden = ok;
  view.hidden = !ok;
  document.body.dataset.auth = ok ? 'in' : 'out';
  if (again) route();
});
document.getElementById('logout').addEventListener('click', () => logout());

function setConn(state) {
  conn.dataset.state = state;
  conn.textContent = state;
  conn.title = {
    live: 'Updates arrive as they happen (event stream).',
    reconnecting: 'The event stream dropped; reconnecting.',
    polling: 'The event stream is unavailable; polling every 2 s.',
    connecting: 'Opening the event stream.',
    offline: 'Logged out: nothing to follow.',
  }[state] || state;
}

// ---- confirm dialog (keyboard-usable, no window.confirm) -------------------

function confirmAction(title, text, okLabel) {
  const dlg = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = okLabel || 'Confirm';
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), {once: true});
    dlg.returnValue = '';
    dlg.showModal();
    document.getElementById('confirm-cancel').focus();
  });
}

// ---- helpers ----------------------------------------------------------------

// debounce coalesces bursts of events into one reload.
function debounce(fn, ms) {
  let t = 0;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

// The debug events (api.request and the like) are left out unless asked;
// the choice is this browser's, for every page.
const debugKey = 'the-loop-show-debug';
function showDebug() {
  try { return localStorage.getItem(debugKey) === '1'; } catch { return false; }
}
function debugToggle(onChange) {
  const box = h('input', {type: 'checkbox', class: 'show-debug', checked: showDebug()});
  box.addEventListener('change', () => {
    try { localStorage.setItem(debugKey, box.checked ? '1' : '0'); } catch { /* this page only */ }
    onChange();
  });
  return h('label', {class: 'debug-toggle'}, box, ' show debug events');
}

// sayFailed reports whether a say's result is a failure: not delivered,
// or an exit code of its own (the wait for the answer failed).
function sayFailed(res) {
  return res.delivered === false || (res.exitCode || 0) !== 0;
}

// isWaiting: a session that waits for a human (issue G's activity).
function isWaiting(row) {
  return row.activity === 'waiting' || row.status === 'waiting';
}

function slackLink(row) {
  if (!row.slackChannel || !row.slackThread) return h('span', {class: 'muted'}, '—');
  const ts = String(row.slackThread).replace('.', '');
  return h('a', {href: `https://slack.com/archives/${encodeURIComponent(row.slackChannel)}/p${ts}`,
    target: '_blank', rel: 'noopener noreferrer'}, 'thread');
}

function liveCell(row) {
  return row.running ? h('span', {class: 'live yes', title: 'the tmux pane is alive'}, 'yes')
    : h('span', {class: 'live no', title: 'no live pane'}, 'no');
}

function lastAnswer(row) {
  return when(row.lastAnswerAt || '');
}

function tabs(active) {
  const tab = (id, label, href) => h('a', {role: 'tab', href, id: `tab-${id}`,
    'aria-selected': String(active === id), class: active === id ? 'tab on' : 'tab'}, label);
  return h('div', {class: 'tabs', role: 'tablist', 'aria-label': 'Kinds of session'},
    tab('standing', 'Standing sessions', '#/'), tab('work', 'Work items', '#/work'));
}

// ---- overview: standing sessions -------------------------------------------

function overview() {
  const waitingBox = h('section', {class: 'waiting', 'aria-label': 'Waiting for a human', hidden: true});
  const tableBox = h('div', {class: 'table-wrap'});
  const msg = h('p', {class: 'notice', role: 'status', hidden: true});
  const form = createForm(msg, () => load());
  const approvals = approvalsPanel('');
  fill(view,
    h('h1', {class: 'page-title'}, 'Sessions'),
    tabs('standing'),
    approvals.nodes,
    waitingBox,
    msg,
    tableBox,
    form);

  async function del(name) {
    if (!await confirmAction(`Delete ${name}?`, `This stops the session ${name} and forgets its definition.`, 'Delete')) return;
    try {
      const res = await post(`${v1}/standing-sessions/delete`, {name});
      const row = (res.sessions || [])[0] || {};
      notice(msg, res.ok ? 'ok' : 'error', `${name}: ${row.outcome || (res.ok ? 'deleted' : 'failed')}${row.detail ? ' — ' + row.detail : ''}`);
    } catch (err) {
      notice(msg, 'error', `delete ${name}: ${errorText(err)}`);
    }
    load();
  }

  function render(rows) {
    const waiting = rows.filter(isWaiting);
    const rest = rows.filter((r) => !isWaiting(r));
    waitingBox.hidden = waiting.length === 0;
    fill(waitingBox,
      h('h2', {}, `Waiting for a human (${waiting.length})`),
      h('ul', {class: 'cards'}, waiting.map((r) => h('li', {class: 'card', dataset: {name: r.name}},
        h('a', {href: `#/s/${encodeURIComponent(r.name)}`, class: 'name'}, r.name),
        ' ', badge('waiting'), ' ', r.description ? h('span', {class: 'muted'}, r.description) : null,
        h('span', {class: 'since'}, 'since ', when(r.activityAt || r.lastMessageAt))))));
    if (rows.length === 0) {
      fill(tableBox, h('p', {class: 'empty'}, 'No standing sessions yet. Declare some in the CLI config, or create one below.'));
      return;
    }
    const head = ['Name', 'Status', 'Activity', 'Live', 'Harness', 'Restarts', 'Last answer', 'Slack', ''];
    fill(tableBox, h('table', {class: 'rows', id: 'standing-rows'},
      h('caption', {class: 'sr-only'}, 'Standing sessions'),
      h('thead', {}, h('tr', {}, head.map((c) => h('th', {scope: 'col'}, c)))),
      h('tbody', {}, [...waiting, ...rest].map((r) => h('tr', {dataset: {name: r.name, status: r.status}, class: isWaiting(r) ? 'is-waiting' : ''},
        h('td', {'data-label': 'Name'}, h('a', {href: `#/s/${encodeURIComponent(r.name)}`, class: 'name'}, r.name),
          r.declared ? null : h('span', {class: 'tag', title: 'created at runtime'}, 'runtime')),
        h('td', {'data-label': 'Status', class: 'status'}, badge(r.status)),
        h('td', {'data-label': 'Activity'}, r.activity !== undefined ? badge(r.activity) : h('span', {class: 'muted', title: 'activity is not reported by this service'}, 'n/a')),
        h('td', {'data-label': 'Live'}, liveCell(r)),
        h('td', {'data-label': 'Harness'}, r.harness || '—'),
        h('td', {'data-label': 'Restarts'}, r.restarts !== undefined ? String(r.restarts) : h('span', {class: 'muted'}, '—')),
        h('td', {'data-label': 'Last answer'}, lastAnswer(r)),
        h('td', {'data-label': 'Slack'}, slackLink(r)),
        h('td', {'data-label': 'Actions', class: 'actions'},
          r.declared ? null : h('button', {type: 'button', class: 'danger small', 'aria-label': `Delete ${r.name}`, onclick: () => del(r.name)}, 'Delete')))))));
  }

  async function load() {
    try {
      render(await get(`${v1}/standing-sessions`));
    } catch (err) {
      if (err.status !== 401) fill(tableBox, h('p', {class: 'error'}, errorText(err)));
    }
  }
  load();
  approvals.load();
  const reload = debounce(load, 60);
  return {onEvent() { reload(); approvals.onEvent(); }, stop() { approvals.stop(); }};
}

function createForm(msg, done) {
  const field = (label, input, help) => h('label', {class: 'field'}, h('span', {}, label), input, help ? h('small', {}, help) : null);
  const name = h('input', {name: 'name', required: true, pattern: '[a-z0-9][a-z0-9-]*', autocomplete: 'off', id: 'create-name'});
  const cwd = h('input', {name: 'cwd', autocomplete: 'off', placeholder: 'the config\'s default'});
  const harness = h('input', {name: 'harness', autocomplete: 'off', placeholder: 'claude'});
  const description = h('input', {name: 'description', autocomplete: 'off'});
  const prompt = h('textarea', {name: 'prompt', rows: 2});
  const autoStart = h('input', {type: 'checkbox', name: 'autoStart', checked: true});
  const start = h('input', {type: 'checkbox', name: 'start', checked: true});
  const submit = h('button', {type: 'submit', class: 'primary'}, 'Create');
  const form = h('form', {class: 'create', id: 'create-form'},
    h('div', {class: 'grid'},
      field('Name', name, 'lower-case letters, digits and dashes'),
      field('Working directory', cwd),
      field('Harness', harness),
      field('Description', description)),
    field('First prompt', prompt),
    h('div', {class: 'checks'},
      h('label', {}, autoStart, ' start with the-loop'),
      h('label', {}, start, ' start now')),
    submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    const body = {name: name.value.trim(), autoStart: autoStart.checked, start: start.checked};
    for (const [k, el] of [['cwd', cwd], ['harness', harness], ['description', description], ['prompt', prompt]]) {
      if (el.value.trim()) body[k] = el.value.trim();
    }
    try {
      const res = await post(`${v1}/standing-sessions/create`, body);
      const row = (res.sessions || [])[0] || {};
      notice(msg, res.ok ? 'ok' : 'error', `${body.name}: ${row.outcome || (res.ok ? 'created' : 'failed')}${row.detail ? ' — ' + row.detail : ''}`);
      if (res.ok) form.reset();
    } catch (err) {
      notice(msg, 'error', `create ${body.name}: ${errorText(err)}`);
    } finally {
      submit.disabled = false;
    }
    done();
  });
  return h('details', {class: 'panel'}, h('summary', {}, 'New standing session'), form);
}

// ---- overview: work items ---------------------------------------------------

function workItems() {
  const box = h('div', {class: 'table-wrap'});
  fill(view, h('h1', {class: 'page-title'}, 'Sessions'), tabs('work'), box);
  async function load() {
    let rows;
    try {
      rows = await get(`${v1}/sessions`);
    } catch (err) {
      if (err.status === 404) fill(box, h('p', {class: 'muted'}, 'Work-item sessions are not available from this service.'));
      else if (err.status !== 401) fill(box, h('p', {class: 'error'}, errorText(err)));
      return;
    }
    if (!rows.length) { fill(box, h('p', {class: 'empty'}, 'No work-item sessions.')); return; }
    const head = ['Work item', 'Title', 'Status', 'Live', 'Harness', 'Last event', 'Link'];
    fill(box, h('table', {class: 'rows', id: 'work-rows'},
      h('thead', {}, h('tr', {}, head.map((c) => h('th', {scope: 'col'}, c)))),
      h('tbody', {}, rows.map((r) => h('tr', {dataset: {ref: r.ref}},
        h('td', {'data-label': 'Work item'}, h('code', {}, r.ref)),
        h('td', {'data-label': 'Title'}, (r.workItem && r.workItem.title) || '—'),
        h('td', {'data-label': 'Status'}, badge(r.status)),
        h('td', {'data-label': 'Live'}, liveCell(r)),
        h('td', {'data-label': 'Harness'}, r.harness || '—'),
        h('td', {'data-label': 'Last event'}, when(r.lastEventAt || r.createdAt)),
        h('td', {'data-label': 'Link'}, r.url ? h('a', {href: r.url, target: '_blank', rel: 'noopener noreferrer'}, 'open') : '—'))))));
  }
  load();
  return {onEvent: debounce(load, 100), stop() {}};
}

// ---- a standing session's page ---------------------------------------------

function session(name) {
  const title = h('h1', {class: 'page-title'}, name, ' ', h('span', {id: 'session-status'}));
  const facts = h('dl', {class: 'facts'});
  const msg = h('p', {class: 'notice', role: 'status', hidden: true, id: 'control-result'});
  const ctl = (verb, label, cls) => h('button', {type: 'button', class: cls || '', id: `btn-${verb}`, disabled: true, onclick: () => control(verb)}, label);
  const btn = {start: ctl('start', 'Start'), restart: ctl('restart', 'Restart'), stop: ctl('stop', 'Stop', 'danger'),
    delete: h('button', {type: 'button', class: 'danger', id: 'btn-delete', hidden: true, onclick: () => del()}, 'Delete')};
  const buttons = h('div', {class: 'buttons'}, btn.start, btn.restart, btn.stop, btn.delete);
  const peek = h('pre', {class: 'peek', id: 'peek', tabindex: 0, 'aria-label': 'The pane as it looks now'});
  const peekNote = h('p', {class: 'muted', id: 'peek-note', hidden: true});
  const peekPanel = h('section', {class: 'panel', id: 'peek-panel'}, h('h2', {}, 'Pane'), peekNote, peek);
  const transcript = h('ol', {class: 'transcript', id: 'transcript'});
  const transcriptPanel = h('section', {class: 'panel', id: 'transcript-panel'}, h('h2', {}, 'Transcript'), transcript);
  const sayText = h('textarea', {id: 'say-text', rows: 3, required: true, disabled: true, 'aria-label': `Message to ${name}`, placeholder: `Say something to ${name}…`});
  const sayWait = h('input', {type: 'checkbox', id: 'say-wait', checked: true});
  const saySend = h('button', {type: 'submit', class: 'primary', id: 'say-send', disabled: true}, 'Send');
  const sayResult = h('div', {class: 'say-result', id: 'say-result', role: 'status', 'aria-live': 'polite'});
  const sayForm = h('form', {class: 'say', id: 'say-form'}, sayText,
    h('div', {class: 'row'}, h('label', {}, sayWait, ' wait for the answer'), saySend), sayResult);
  const sayPanel = h('section', {class: 'panel', id: 'say-panel'}, h('h2', {}, 'Say'), sayForm);
  const events = h('div', {class: 'table-wrap', id: 'session-events'});
  const approvals = approvalsPanel(name);
  fill(view,
    h('p', {class: 'crumbs'}, h('a', {href: '#/'}, '← Sessions')),
    title, approvals.nodes, msg, buttons,
    h('div', {class: 'split'},
      h('div', {}, sayPanel, peekPanel),
      h('div', {}, h('section', {class: 'panel'}, h('h2', {}, 'Details'), facts), transcriptPanel)),
    h('section', {class: 'panel'}, h('div', {class: 'panel-head'}, h('h2', {}, 'Events'), debugToggle(() => loadEvents())), events));

  let stopped = false;
  let peekTimer = 0;
  let row = null;    // the session's row as last read (null: not yet, or none)
  let busy = false;  // a control verb is under way

  // setButtons offers what can act on the session as it is: Start only
  // when it can start (and then as the primary action), Stop and Restart
  // only on a live session, Say only into a live pane; a session the-loop
  // has no record of (absent) shows Start and Delete alone.
  function setButtons() {
    const r = row || {};
    const live = !!r.running;
    const absent = !row || r.status === 'absent';
    const startable = !!row && !live && r.status !== 'broken';
    btn.start.disabled = busy || !startable;
    btn.start.className = startable ? 'primary' : '';
    btn.start.title = live ? `${name} is running` : '';
    btn.stop.hidden = btn.restart.hidden = absent;
    btn.stop.disabled = busy || !(live || r.status === 'running');
    btn.restart.disabled = busy || !live;
    btn.delete.hidden = !row || r.declared !== false;
    btn.delete.disabled = busy;
    sayPanel.hidden = absent;
    sayText.disabled = saySend.disabled = !live;
    sayText.placeholder = live ? `Say something to ${name}…` : `${name} has no live pane: start it to say something`;
  }

  async function loadRow() {
    try {
      const r = await get(`${v1}/standing-sessions/one`, {name});
      row = r;
      fill(document.getElementById('session-status') || title, badge(r.status), ' ', isWaiting(r) ? badge('waiting') : null);
      const fact = (k, v) => [h('dt', {}, k), h('dd', {}, v)];
      fill(facts,
        fact('Status', r.status || '—'),
        fact('Activity', r.activity !== undefined ? badge(r.activity) : h('span', {class: 'muted'}, 'not available')),
        fact('Live', liveCell(r)),
        fact('Harness', r.harness || '—'),
        fact('Working directory', h('code', {}, r.cwd || '—')),
        fact('tmux', h('code', {}, r.tmuxTarget || '—')),
        fact('Started', when(r.startedAt)),
        fact('Last message', when(r.lastMessageAt)),
        fact('Last answer', lastAnswer(r)),
        fact('Slack', slackLink(r)),
        r.description ? fact('Description', r.description) : null);
    } catch (err) {
      if (err.status === 404) { row = null; fill(facts, h('p', {class: 'error'}, `No standing session named ${name}.`)); }
    }
    setButtons();
  }

  async function control(verb) {
    if (verb === 'stop' && !await confirmAction(`Stop ${name}?`, `The agent in ${name} stops; start it again to resume its conversation.`, 'Stop')) return;
    busy = true;
    setButtons();
    notice(msg, 'info', `${verb}…`);
    try {
      const res = await post(`${v1}/standing-sessions/control`, {name, verb});
      const r = (res.sessions || [])[0] || {};
      notice(msg, res.ok ? 'ok' : 'error', `${verb}: ${r.outcome || (res.ok ? 'done' : 'failed')}${r.detail ? ' — ' + r.detail : ''}`);
    } catch (err) {
      notice(msg, 'error', `${verb}: ${errorText(err)}`);
    } finally {
      busy = false;
    }
    loadRow();
  }

  async function del() {
    if (!await confirmAction(`Delete ${name}?`, `This stops the session ${name} and forgets its definition.`, 'Delete')) return;
    try {
      const res = await post(`${v1}/standing-sessions/delete`, {name});
      if (res.ok) { location.hash = '#/'; return; }
      const r = (res.sessions || [])[0] || {};
      notice(msg, 'error', `delete: ${r.outcome || 'failed'}${r.detail ? ' — ' + r.detail : ''}`);
    } catch (err) {
      notice(msg, 'error', `delete: ${errorText(err)}`);
    }
    loadRow();
  }

  sayForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const text = sayText.value;
    if (!text.trim()) return;
    saySend.disabled = true;
    fill(sayResult, h('span', {class: 'muted'}, sayWait.checked ? 'sent; waiting for the answer…' : 'sending…'));
    const body = {name, text, actor: 'dashboard'};
    if (sayWait.checked) { body.wait = true; body.timeoutSeconds = 300; }
    try {
      const res = await post(`${v1}/standing-sessions/say`, body);
      sayText.value = '';
      const failed = sayFailed(res);
      const outcome = res.outcome || (res.delivered ? 'delivered' : 'not delivered');
      // A line is red only when the say failed: a waiting say reports its
      // delivery on stderr (the answer is its stdout), which is no failure.
      const lines = (res.messages || []).map((m, i) => h('div', {class: `say-line ${failed && (i > 0 || res.delivered === false) ? 'error' : 'muted'}`}, fold(m.text, 200)));
      fill(sayResult,
        h('p', {class: 'outcome'}, 'Outcome: ', badge(outcome, res.delivered === false ? 'failed' : outcome)),
        res.reply !== undefined && res.reply !== null && res.reply !== ''
          ? h('div', {class: 'reply', id: 'say-reply'}, h('h3', {}, 'Answer'), h('pre', {}, typeof res.reply === 'string' ? res.reply : (res.reply.text || JSON.stringify(res.reply, null, 2))))
          : (sayWait.checked && res.outcome === undefined ? h('p', {class: 'muted'}, 'This service does not wait for answers yet: the message was only delivered.') : null),
        lines);
    } catch (err) {
      fill(sayResult, h('p', {class: 'error'}, fold(errorText(err), 200)));
    } finally {
      saySend.disabled = !(row && row.running);
    }
    loadTranscript();
  });

  // The pane (GET /standing-sessions/peek: {name, tmuxTarget, tmuxSocket,
  // running, lines[]}), read every second while the page is visible; a
  // session without a pane of the-loop's (never started, stopped) is 404,
  // said as such, and read again, since it may start. It opens at its
  // latest lines.
  function setPeekNote(text) {
    peekNote.textContent = text;
    peekNote.hidden = !text;
  }
  let peekShown = false;
  async function loadPeek() {
    if (stopped) return;
    if (!document.hidden) {
      try {
        const p = await get(`${v1}/standing-sessions/peek`, {name, lines: 40});
        const text = (p.lines || []).join('\n');
        peek.hidden = false;
        stick(peek, !peekShown, () => { if (peek.textContent !== text) peek.textContent = text; });
        peekShown = true;
        peek.dataset.running = String(!!p.running);
        setPeekNote(p.running ? '' : 'The agent\'s pane is dead: this is what it showed last.');
      } catch (err) {
        if (err.status === 404) {
          peek.textContent = '';
          peek.hidden = true;
          peekShown = false;
          setPeekNote(`${name} has no tmux pane of the-loop's (not started, or stopped).`);
        } else if (err.status !== 401) {
          setPeekNote(errorText(err));
        }
      }
    }
    if (!stopped) peekTimer = setTimeout(loadPeek, 1000);
  }

  // The transcript (GET /standing-sessions/transcript: {name,
  // entries:[{role, text, at, usage}]}), opened at its latest entries; a
  // harness whose transcript the-loop cannot read is 400, said once and
  // not asked again.
  let transcriptAvailable = true;
  let transcriptShown = false;
  async function loadTranscript() {
    if (!transcriptAvailable) return;
    try {
      const t = await get(`${v1}/standing-sessions/transcript`, {name, last: 50});
      const entries = t.entries || [];
      if (!entries.length) { fill(transcript, h('li', {class: 'muted'}, 'Nothing said yet.')); return; }
      stick(transcript, !transcriptShown, () => fill(transcript, entries.map((en) => h('li', {class: `t-${en.role}`},
        h('div', {class: 'who'}, en.role, ' ', when(en.at),
          en.usage ? h('span', {class: 'muted', title: 'tokens: input, output (cache read, cache write)'},
            ` · ${en.usage.input} in, ${en.usage.output} out`) : null),
        h('div', {class: 'text'}, en.text)))));
      transcriptShown = true;
    } catch (err) {
      if (err.status === 400) {
        transcriptAvailable = false;
        fill(transcriptPanel, h('h2', {}, 'Transcript'), h('p', {class: 'muted', id: 'transcript-na'}, err.message));
      } else if (err.status === 404) {
        fill(transcript, h('li', {class: 'muted'}, `No standing session named ${name}.`));
      }
    }
  }

  async function loadEvents() {
    try {
      renderEvents(events, await get(`${v1}/events`, {standing: name, limit: 50, level: showDebug() ? '' : 'info'}), false);
    } catch (err) {
      if (err.status !== 401) fill(events, h('p', {class: 'error'}, errorText(err)));
    }
  }

  loadRow(); loadPeek(); loadTranscript(); loadEvents(); approvals.load();
  const reload = debounce(() => { loadRow(); loadTranscript(); loadEvents(); approvals.load(); }, 80);
  return {
    onEvent(ev) { if (!ev.standing || ev.standing === name) reload(); },
    stop() { stopped = true; clearTimeout(peekTimer); },
  };
}

// ---- events ------------------------------------------------------------------

const envelopeKeys = new Set(['ts', 'source', 'event', 'level', 'pid', 'seq']);

function renderEvents(box, evs, withSession) {
  if (!evs.length) { fill(box, h('p', {class: 'empty'}, 'No events.')); return; }
  const head = ['Time', 'Level', 'Event', withSession ? 'Session' : null, 'Details'].filter(Boolean);
  fill(box, h('table', {class: 'rows events'},
    h('thead', {}, h('tr', {}, head.map((c) => h('th', {scope: 'col'}, c)))),
    h('tbody', {}, evs.slice().reverse().map((ev) => {
      const details = Object.entries(ev).filter(([k]) => !envelopeKeys.has(k) && k !== 'standing' && k !== 'work_item')
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join('  ');
      return h('tr', {class: `lvl-${ev.level}`, dataset: {seq: ev.seq, event: ev.event}},
        h('td', {'data-label': 'Time'}, when(ev.ts)),
        h('td', {'data-label': 'Level'}, badge(ev.level)),
        h('td', {'data-label': 'Event'}, h('code', {}, ev.event)),
        withSession ? h('td', {'data-label': 'Session'}, ev.standing ? h('a', {href: `#/s/${encodeURIComponent(ev.standing)}`}, ev.standing) : (ev.work_item || '—')) : null,
        h('td', {'data-label': 'Details', class: 'details'}, fold(details, 160)));
    }))));
}

function eventsPage(params) {
  const input = (name, label, attrs) => h('label', {class: 'field'}, h('span', {}, label),
    h('input', {name, value: params.get(name) || '', autocomplete: 'off', ...attrs}));
  const level = h('select', {name: 'level'}, ['', 'debug', 'info', 'warning', 'error'].map((l) =>
    h('option', {value: l, selected: (params.get('level') || '') === l}, l || 'any')));
  const form = h('form', {class: 'filters', id: 'event-filters'},
    input('type', 'Type', {placeholder: 'standing.*'}),
    input('standing', 'Standing session'),
    input('workItem', 'Work item'),
    h('label', {class: 'field'}, h('span', {}, 'Level at least'), level),
    input('since', 'Since', {placeholder: '15m, 2h, 2026-01-01'}),
    input('limit', 'Last', {type: 'number', min: 0, value: params.get('limit') || '200'}),
    h('button', {type: 'submit', class: 'primary'}, 'Apply'));
  const msg = h('p', {class: 'error', hidden: true});
  const box = h('div', {class: 'table-wrap', id: 'event-rows'});
  fill(view, h('h1', {class: 'page-title'}, 'Events'), form, h('div', {class: 'panel-head'}, debugToggle(() => load())), msg, box);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (String(v).trim()) q.set(k, String(v).trim());
    location.hash = `#/events?${q}`;
  });
  async function load() {
    const q = {};
    for (const k of ['standing', 'workItem', 'level', 'since']) q[k] = params.get(k) || '';
    if (!q.level && !showDebug()) q.level = 'info'; // debug rows only when asked
    q.type = (params.get('type') || '').split(/[ ,]+/).filter(Boolean);
    q.limit = params.get('limit') || '200';
    try {
      renderEvents(box, await get(`${v1}/events`, q), true);
      msg.hidden = true;
    } catch (err) {
      if (err.status !== 401) notice(msg, 'error', errorText(err));
    }
  }
  load();
  return {onEvent: debounce(load, 100), stop() {}};
}

// ---- router ------------------------------------------------------------------

function route() {
  if (current) current.stop();
  const hash = location.hash || '#/';
  const [path, query] = hash.slice(1).split('?');
  const params = new URLSearchParams(query || '');
  let page = 'overview';
  if (path.startsWith('/s/')) {
    page = 'session';
    current = session(decodeURIComponent(path.slice(3)));
  } else if (path === '/events') {
    page = 'events';
    current = eventsPage(params);
  } else if (path === '/work') {
    current = workItems();
  } else {
    current = overview();
  }
  document.body.dataset.page = page;
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.getElementById('main').focus({preventScroll: true});
}

window.addEventListener('hashchange', route);
route();
connect({
  onEvent: (ev) => { if (current) current.onEvent(ev); },
  onState: setConn,
});
