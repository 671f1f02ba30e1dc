// One event stream per browser. The tab that holds the Web Lock
// "the-loop-stream-<port>" reads GET /api/v1/stream and relays each event
// and its connection state to the other tabs over a BroadcastChannel; when
// it closes, another tab takes the lock and the stream over. The stream is
// read with fetch, not EventSource, so that it carries the session's secret
// as Authorization: Bearer (EventSource sends cookies only). When the
// stream has been down for 3 s (at once when the service refuses it: 404
// turned off, 503 full) the leader polls GET /api/v1/events?after= instead,
// trying the stream again now and then, so the pages keep updating.
// States: connecting (until the stream or a poll answers), live,
// reconnecting, polling, and offline when logged out.

import {get, v1, authHeaders, tellAuth, secret, ApiError} from './api.js';

const FAIL_AFTER_MS = 3000;    // a stream down this long: poll instead
const RETRY_MS = 1000;         // reopen a dropped stream this soon
const POLL_MS = 2000;          // the polling fallback's cadence
const RETRY_STREAM_MS = 15000; // while polling, try the stream this often

// readStream reads one server-sent-events response to its end, handing
// each message ({event, data, id}) to onMessage.
async function readStream(url, onMessage) {
  const resp = await fetch(url, {headers: {Accept: 'text/event-stream', ...authHeaders()}, credentials: 'omit', cache: 'no-store'});
  if (resp.status === 401) tellAuth(false);
  if (!resp.ok || !resp.body) throw new ApiError(resp.status, `the stream answered ${resp.status}`);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let msg = {event: 'message', data: [], id: ''};
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line === '') {
        if (msg.data.length) onMessage({event: msg.event, data: msg.data.join('\n'), id: msg.id});
        msg = {event: 'message', data: [], id: ''};
        continue;
      }
      if (line.startsWith(':')) continue; // a keep-alive
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? '' : line.slice(colon + 1);
      if (val.startsWith(' ')) val = val.slice(1);
      if (field === 'event') msg.event = val;
      else if (field === 'data') msg.data.push(val);
      else if (field === 'id') msg.id = val;
    }
  }
}

export function connect({onEvent, onState}) {
  const key = `the-loop-stream-${location.port || '80'}`;
  const channel = 'BroadcastChannel' in window ? new BroadcastChannel(key) : null;
  let state = 'connecting';
  let leader = false;
  const seen = new Set(); // seqs already handed on (a replay may repeat one)

  function deliver(ev) {
    if (ev && ev.seq) {
      if (seen.has(ev.seq)) return;
      seen.add(ev.seq);
      if (seen.size > 2000) seen.delete(seen.values().next().value);
    }
    onEvent(ev);
  }
  function setState(s) {
    state = s;
    onState(s);
    if (leader && channel) channel.postMessage({type: 'state', state: s});
  }

  if (channel) {
    channel.onmessage = (m) => {
      const d = m.data || {};
      if (d.type === 'event' && !leader) deliver(d.event);
      else if (d.type === 'state' && !leader) { state = d.state; onState(d.state); }
      else if (d.type === 'hello' && leader) channel.postMessage({type: 'state', state});
    };
  }

  function lead() {
    leader = true;
    return new Promise(() => runStream()); // held until the tab goes away
  }

  function runStream() {
    let lastSeq = 0;
    let open = false;     // a stream request is under way
    let loggedOut = false;
    let failTimer = 0;
    let pollTimer = 0;
    let retryTimer = 0;
    const relay = (ev) => {
      if (ev.seq && ev.seq > lastSeq) lastSeq = ev.seq;
      deliver(ev);
      if (channel) channel.postMessage({type: 'event', event: ev});
    };
    const onMessage = (m) => {
      if (m.event === 'ready') {
        const d = JSON.parse(m.data);
        if (!lastSeq) lastSeq = d.seq;
        clearTimeout(failTimer); failTimer = 0;
        stopPolling();
        setState('live');
        relay({event: 'stream.ready', seq: 0, ready: d});
      } else if (m.event === 'event') {
        relay(JSON.parse(m.data));
      }
    };
    const stream = async () => {
      if (open || loggedOut) return;
      open = true;
      try {
        await readStream(lastSeq ? `${v1}/stream?after=${lastSeq}` : `${v1}/stream`, onMessage);
        dropped(null);
      } catch (err) {
        dropped(err);
      } finally {
        open = false;
      }
    };
    const dropped = (err) => {
      if (err && err.status === 401) { loggedOut = true; stopPolling(); setState('offline'); return; }
      if (state === 'polling') return; // the retry timer tries again
      if (state === 'live') setState('reconnecting');
      if (err && (err.status === 404 || err.status === 503)) { fallBack(); return; }
      if (!failTimer) failTimer = setTimeout(fallBack, FAIL_AFTER_MS);
      setTimeout(stream, RETRY_MS);
    };
    const fallBack = () => {
      clearTimeout(failTimer); failTimer = 0;
      if (state === 'polling' || loggedOut) return;
      setState('polling');
      const poll = async () => {
        try {
          const evs = await get(`${v1}/events`, lastSeq ? {after: lastSeq} : {limit: 1});
          if (!lastSeq) {
            lastSeq = evs.length ? evs[evs.length - 1].seq : 0;
            relay({event: 'stream.ready', seq: 0, ready: {seq: lastSeq}});
          } else {
            evs.forEach(relay);
          }
        } catch (err) {
          // Logged out: nothing to poll for until a login.
          if (err && err.status === 401) { loggedOut = true; stopPolling(); setState('offline'); }
          // Anything else: the state stays polling; the next round tries again.
        }
      };
      poll();
      pollTimer = setInterval(poll, POLL_MS);
      retryTimer = setInterval(stream, RETRY_STREAM_MS);
    };
    const stopPolling = () => {
      clearInterval(pollTimer); pollTimer = 0;
      clearInterval(retryTimer); retryTimer = 0;
    };
    // A login in another tab brings a secret: start again.
    window.addEventListener('storage', () => {
      if (loggedOut && secret()) { loggedOut = false; setState('connecting'); stream(); }
    });
    stream();
  }

  if (navigator.locks && channel) {
    navigator.locks.request(key, lead);
    channel.postMessage({type: 'hello'});
  } else {
    lead(); // no locks or no channel: this tab streams for itself
  }
  return {state: () => state};
}
