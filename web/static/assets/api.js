// The REST API as the page calls it. The dashboard's session secret lives
// in localStorage (this origin's alone: scheme, host and port) and goes as
// Authorization: Bearer; no cookie carries authority, since a browser sends
// a host's cookies to every port of it. POSTs are JSON (the service refuses
// anything else).

// ApiError is a non-2xx answer: status and the service's detail.
export class ApiError extends Error {
  constructor(status, detail) {
    super(detail || `HTTP ${status}`);
    this.status = status;
  }
}

// errorText words a failed call for the page: the status and the
// service's detail.
export function errorText(err) {
  if (err instanceof ApiError) return `${err.status}: ${err.message}`;
  return String(err && err.message || err);
}

export const v1 = '/api/v1';
const secretKey = 'the-loop-session';

// secret is this browser's session secret ('' when logged out).
export function secret() {
  try { return localStorage.getItem(secretKey) || ''; } catch { return ''; }
}
function keep(s) {
  try {
    if (s) localStorage.setItem(secretKey, s);
    else localStorage.removeItem(secretKey);
  } catch { /* storage refused: the session lasts this page */ }
}

// authHeaders are the headers that carry the secret (none when logged out).
export function authHeaders() {
  const s = secret();
  return s ? {Authorization: `Bearer ${s}`} : {};
}

// listeners are told when an answer is 401 (logged out) or any other (in).
const authListeners = new Set();
export function onAuth(fn) { authListeners.add(fn); }
// tellAuth tells them; a 401 also forgets the secret (ended or expired).
export function tellAuth(ok) {
  if (!ok) keep('');
  for (const fn of authListeners) fn(ok);
}
// Another tab logging in or out changes the secret for this one too.
window.addEventListener('storage', (e) => { if (e.key === secretKey) tellAuth(!!e.newValue); });

async function call(method, path, body, signal) {
  const init = {method, credentials: 'omit', headers: {Accept: 'application/json', ...authHeaders()}, signal};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  if (path !== `${v1}/dashboard/session`) tellAuth(resp.status !== 401);
  const text = await resp.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!resp.ok) throw new ApiError(resp.status, data && data.detail ? data.detail : String(data || ''));
  return data;
}

// get reads a path with query parameters (empty ones left out).
export function get(path, params, signal) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (Array.isArray(v)) v.forEach((x) => x !== '' && q.append(k, x));
    else if (v !== '' && v !== undefined && v !== null) q.set(k, String(v));
  }
  const qs = q.toString();
  return call('GET', qs ? `${path}?${qs}` : path, undefined, signal);
}

// post sends a JSON body.
export function post(path, body) { return call('POST', path, body || {}); }

// exchangeCode trades a login code for a session secret and keeps it.
export async function exchangeCode(code) {
  const res = await call('POST', `${v1}/dashboard/session`, {code});
  keep(res.secret);
  return res;
}

// logout ends this browser's session and forgets its secret.
export async function logout() {
  try { await post(`${v1}/dashboard/logout`); } finally { tellAuth(false); }
}
