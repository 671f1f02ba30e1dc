// Small DOM helpers: every piece of data goes in as text, never as markup.

// h builds an element: h('a', {href: '#/'}, 'text', child, ...). Attributes
// whose value is null, undefined or false are left out; true sets them empty.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// clear empties an element and appends children.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// ago words a timestamp as an age ("5 s ago", "3 min ago"), with the time
// itself in the title; "—" when there is none.
export function when(ts) {
  if (!ts) return h('span', {class: 'muted'}, '—');
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return h('span', {}, ts);
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  let text;
  if (s < 60) text = `${s} s ago`;
  else if (s < 3600) text = `${Math.round(s / 60)} min ago`;
  else if (s < 86400) text = `${Math.round(s / 3600)} h ago`;
  else text = `${Math.round(s / 86400)} d ago`;
  return h('time', {datetime: ts, title: new Date(t).toLocaleString()}, text);
}

// badge shows a status word with a class of its own.
export function badge(word, kind) {
  if (!word) return h('span', {class: 'muted'}, '—');
  return h('span', {class: `badge b-${kind || word}`}, word);
}

// fold shows a long text cut to its first limit characters, with an
// expander that shows it all (a detail that prints a whole PATH stays one
// line until asked); a short text is a plain span.
export function fold(text, limit = 160) {
  text = String(text);
  if (text.length <= limit) return h('span', {}, text);
  return h('details', {class: 'fold'},
    h('summary', {title: 'Show all of it'}, h('span', {class: 'cut'}, text.slice(0, limit) + '…'),
      ' ', h('span', {class: 'more'}, `${text.length - limit} more`)),
    h('span', {class: 'full'}, text));
}

// notice shows text in a notice element of kind ok, error or info (its
// data-kind), folded past 200 characters; no text hides it.
export function notice(el, kind, text) {
  fill(el, text ? fold(text, 200) : '');
  el.dataset.kind = kind;
  el.hidden = !text;
}

// stick scrolls el to its end when it was there already (or when first
// is true), after update changed what it holds: a pane or a transcript
// opens at its latest lines and keeps following them unless scrolled up.
export function stick(el, first, update) {
  const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
  update();
  if (first || atEnd) el.scrollTop = el.scrollHeight;
}
