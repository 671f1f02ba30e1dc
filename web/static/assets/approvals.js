// Pending approvals (decisions D35): the permission requests of standing
// sessions' agents that wait for a decision, listed first — on the
// overview every session's, on a session's page its own — each with its
// session, its tool, when it was asked and its input as the approver reads
// it, then Approve, and Deny with a message for the model. A decision is
// POST /api/v1/approvals/{id} {decision, message, session}: the service
// records the operator as the decider (a dashboard session is the
// operator's), the waiting hook answers the agent's CLI, and the list is
// read again, so a decided row goes away. The section shows only while
// some are pending; nothing here decides on its own.

import {h, fill, when, notice} from './dom.js';
import {get, post, errorText, v1} from './api.js';

// maxShown is how many characters of an input an approver is shown, as a
// Slack post shows (hearing.MaxDecidableText). A longer input, or one the
// service kept cut, shows its first maxShown and may be denied here; it is
// approved only where it shows whole (`the-loop standing approvals`):
// nobody approves what they were not shown.
export const maxShown = 3000;

// maxMessage is the longest deny message, in bytes (loop.MaxDenyMessage).
export const maxMessage = 4096;

// shapes are the credential shapes the service's redactor replaces
// (redact.Shapes, redact/redact.go; the browser test holds the two to the
// same answers): what the page shows of an input has them replaced, as a
// Slack post has.
const shapes = /\b(?:sk-ant-[A-Za-z0-9_-]{20,}|sk-(?:proj-)?[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|AKIA[0-9A-Z]{16})/g;

// redact replaces every credential shape in text with [redacted].
export function redact(text) {
  return String(text).replace(shapes, '[redacted]');
}

// inputText is what an approver reads of an approval's input: a Bash
// command as it is, else the input's JSON, indented (an input the service
// kept cut is a string of its first part: that string).
export function inputText(a) {
  const input = a.input;
  if (a.tool === 'Bash' && input && typeof input === 'object' && typeof input.command === 'string') return input.command;
  if (typeof input === 'string') return input;
  return JSON.stringify(input === undefined ? null : input, null, 2);
}

// shown is the input as the page shows it: redacted, then cut at maxShown
// characters; whole is false when some of it is left out.
export function shown(a) {
  const chars = [...redact(inputText(a))];
  return {text: chars.slice(0, maxShown).join(''), whole: chars.length <= maxShown && !a.inputTruncated};
}

function byteLength(text) {
  return new TextEncoder().encode(text).length;
}

// approvalsPanel is the section of the pending approvals of session (''
// for every session's) and the notice that reports each decision (it
// stays when the section hides). load reads them again; onEvent is load,
// coalesced; stop drops a load onEvent put off.
export function approvalsPanel(session) {
  const title = h('h2', {id: 'approvals-title'}, 'Pending approvals');
  const list = h('ul', {class: 'approval-list', id: 'approval-list'});
  const box = h('section', {class: 'approvals', id: 'approvals', 'aria-labelledby': 'approvals-title', hidden: true}, title, list);
  const msg = h('p', {class: 'notice', role: 'status', id: 'approval-result', tabindex: -1, hidden: true});
  const rows = new Map(); // id → {li, asked, first, setBusy}
  let seq = 0;

  function render(pending) {
    box.hidden = pending.length === 0;
    title.textContent = `Pending approvals (${pending.length})`;
    const ids = new Set(pending.map((a) => a.id));
    for (const [id, r] of rows) {
      if (!ids.has(id)) { r.li.remove(); rows.delete(id); }
    }
    // Rows already shown are kept as they are (a message being typed, the
    // focus), only their age is said again.
    pending.forEach((a, i) => {
      let r = rows.get(a.id);
      if (r) fill(r.asked, when(a.requestedAt));
      else rows.set(a.id, r = row(a, decide));
      if (list.children[i] !== r.li) list.insertBefore(r.li, list.children[i] || null);
    });
  }

  async function load() {
    const mine = ++seq;
    let all;
    try {
      all = await get(`${v1}/approvals`, {session});
    } catch (err) {
      if (mine === seq && err.status !== 401) notice(msg, 'error', `pending approvals: ${errorText(err)}`);
      return;
    }
    if (mine === seq) render((all || []).filter((a) => a.status === 'pending'));
  }

  async function decide(a, r, decision) {
    const message = decision === 'deny' ? r.message.value : '';
    if (byteLength(message) > maxMessage) {
      notice(msg, 'error', `deny ${a.id}: the message is ${byteLength(message)} bytes; a deny's message is at most ${maxMessage} bytes: shorten it`);
      r.message.focus();
      return;
    }
    const body = {decision, session: a.session};
    if (message.trim()) body.message = message;
    const focused = r.li.contains(document.activeElement);
    r.setBusy(true);
    try {
      const res = await post(`${v1}/approvals/${encodeURIComponent(a.id)}`, body);
      notice(msg, 'ok', `${a.session}: ${a.tool} ${res.status || decision} (approval ${a.id})`);
    } catch (err) {
      notice(msg, 'error', `${decision} ${a.session}'s ${a.tool} (approval ${a.id}): ${errorText(err)}`);
    } finally {
      r.setBusy(false);
    }
    await load();
    // The focus leaves with a decided row: on to the next one, else the
    // decision's notice.
    if (focused && !r.li.isConnected) {
      const next = list.querySelector('li.approval');
      (next ? rows.get(next.dataset.id).first : msg).focus();
    }
  }

  let timer = 0;
  return {
    nodes: [box, msg],
    load,
    onEvent() { clearTimeout(timer); timer = setTimeout(load, 60); },
    stop() { clearTimeout(timer); },
  };
}

// row is one pending approval's list item; its buttons call decide(a, row,
// 'allow' | 'deny').
function row(a, decide) {
  const input = shown(a);
  const what = `${a.tool} for ${a.session} (approval ${a.id})`;
  const asked = h('span', {class: 'asked'}, when(a.requestedAt));
  const message = h('input', {type: 'text', name: 'message', class: 'deny-message', maxlength: maxMessage, autocomplete: 'off',
    id: `deny-message-${a.id}`, placeholder: 'optional: the agent reads it'});
  const approve = h('button', {type: 'button', class: input.whole ? 'primary approve' : 'approve', 'aria-label': `Approve ${what}`,
    title: input.whole ? '' : `Only part of the input shows here: approve it where it shows whole (the-loop standing approvals ${a.session})`},
  'Approve');
  const deny = h('button', {type: 'submit', class: 'danger deny', 'aria-label': `Deny ${what}`}, 'Deny');
  const form = h('form', {class: 'decide'}, approve,
    h('label', {class: 'deny-field', for: message.id}, h('span', {}, 'Deny message'), message), deny);
  const li = h('li', {class: 'approval', dataset: {id: a.id, session: a.session}},
    h('div', {class: 'approval-head'},
      h('a', {href: `#/s/${encodeURIComponent(a.session)}`, class: 'name'}, a.session),
      ' asks to use ', h('code', {class: 'tool'}, a.tool), ' ',
      h('span', {class: 'muted'}, 'asked ', asked, ' · approval ', h('code', {}, a.id))),
    a.cwd ? h('div', {class: 'muted cwd'}, 'in ', h('code', {}, a.cwd)) : null,
    h('pre', {class: 'approval-input', tabindex: 0, 'aria-label': `The input of ${what}`}, h('code', {}, input.text)),
    input.whole ? null : h('p', {class: 'cut-note'},
      `The input is longer than ${maxShown.toLocaleString('en')} characters: only its start shows here. `,
      'Deny it here, or read it whole with ', h('code', {}, `the-loop standing approvals ${a.session} --format json`),
      ' and decide there.'),
    form);
  const r = {li, asked, message, first: input.whole ? approve : message};
  r.setBusy = (busy) => {
    approve.disabled = busy || !input.whole;
    deny.disabled = busy;
    message.disabled = busy;
  };
  r.setBusy(false);
  approve.addEventListener('click', () => decide(a, r, 'allow'));
  form.addEventListener('submit', (e) => { e.preventDefault(); decide(a, r, 'deny'); });
  return r;
}
