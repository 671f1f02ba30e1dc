// One event stream per browser (issue 20). The tab that holds the Web Lock
// "the-loop-stream-<port>" opens GET /api/v1/stream and relays each event
// and its connection state to the other tabs over a BroadcastChannel; when
// it closes, another tab takes the lock and the stream over. When the
// stream has been down for 3 s the leader polls GET /api/v1/events?after=
// instead (trying the stream again now and then), so the pages keep
// updating. States: live, reconnecting, polling (and offline before any).

import {get, v1} from './api.js';

const FAIL_AFTER_MS = 3000;   // a stream down this long: poll instead
const POLL_MS = 2000;         // the polling fallback's cadence
const RETRY_STREAM_MS = 15000; // while polling, try the stream this often

export function connect({onEvent, onState}) {
  const key = `the-loop-stream-${location.port || '80'}`;
  const channel = 'BroadcastChannel' in window ? new BroadcastChannel(key) : null;
  let state = 'offline';
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
    let es = null;
    let failTimer = 0;
    let pollTimer = 0;
    let retryTimer = 0;
    const relay = (ev) => {
      if (ev.seq && ev.seq > lastSeq) lastSeq = ev.seq;
      deliver(ev);
      if (channel) channel.postMessage({type: 'event', event: ev});
    };
    const open = () => {
      const url = lastSeq ? `${v1}/stream?after=${lastSeq}` : `${v1}/stream`;
      es = new EventSource(url);
      es.addEventListener('ready', (m) => {
        const d = JSON.parse(m.data);
        if (!lastSeq) lastSeq = d.seq;
        clearTimeout(failTimer); failTimer = 0;
        stopPolling();
        setState('live');
        relay({event: 'stream.ready', seq: 0, ready: d});
      });
      es.addEventListener('event', (m) => relay(JSON.parse(m.data)));
      es.onerror = () => {
        if (state === 'polling') { es.close(); es = null; return; }
        if (state !== 'reconnecting') setState('reconnecting');
        if (!failTimer) failTimer = setTimeout(fallBack, FAIL_AFTER_MS);
      };
    };
    const fallBack = () => {
      failTimer = 0;
      if (es) { es.close(); es = null; }
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
          // Logged out: nothing to poll for until a login reloads the page.
          if (err && err.status === 401) { stopPolling(); setState('offline'); }
          // Anything else: the state stays polling; the next round tries again.
        }
      };
      poll();
      pollTimer = setInterval(poll, POLL_MS);
      retryTimer = setInterval(() => { if (!es) open(); }, RETRY_STREAM_MS);
    };
    const stopPolling = () => {
      clearInterval(pollTimer); pollTimer = 0;
      clearInterval(retryTimer); retryTimer = 0;
    };
    open();
  }

  if (navigator.locks && channel) {
    navigator.locks.request(key, lead);
    channel.postMessage({type: 'hello'});
  } else {
    lead(); // no locks or no channel: this tab streams for itself
  }
  return {state: () => state};
}
