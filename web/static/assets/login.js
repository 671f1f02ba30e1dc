// The login page, /login#code=<code>: the code rides in the fragment (the
// browser never sends it, so no log or Referer holds it). The page takes it
// out of the address bar, exchanges it once for a session secret (POST
// /api/v1/dashboard/session), keeps the secret in localStorage — this
// origin's alone, unlike a cookie, which a browser sends to every port of
// the host — and goes to the dashboard.

import {exchangeCode} from './api.js';

const code = new URLSearchParams(location.hash.slice(1)).get('code') || '';
history.replaceState(null, '', location.pathname);

function refuse(detail) {
  document.getElementById('logging-in').hidden = true;
  document.getElementById('refused-detail').textContent = detail || '';
  document.getElementById('refused').hidden = false;
}

if (!code) {
  refuse('This address holds no login code.');
} else {
  exchangeCode(code).then(() => location.replace('/'), (err) => refuse(err.message));
}
