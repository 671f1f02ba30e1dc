// The REST API as the page calls it: the session cookie goes along on its
// own (same origin), POSTs are JSON (the service refuses anything else, and
// checks their Origin).

// ApiError is a non-2xx answer: status and the service's detail.
export class ApiError extends Error {
  constructor(status, detail) {
    super(detail || `HTTP ${status}`);
    this.status = status;
  }
}

// listeners are told when an answer is 401 (logged out) or any other (in).
const authListeners = new Set();
export function onAuth(fn) { authListeners.add(fn); }
function tellAuth(ok) { for (const fn of authListeners) fn(ok); }

async function call(method, path, body, signal) {
  const init = {method, credentials: 'same-origin', headers: {Accept: 'application/json'}, signal};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  tellAuth(resp.status !== 401);
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

export const v1 = '/api/v1';
