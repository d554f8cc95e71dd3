// Records DevTools protocol messages from chromium-headless-shell in both
// pipe wire formats (JSON and Chromium's CBOR dialect) as test fixtures.
//
// Usage (from the repository root):
//   node internal/cdpcbor/testdata/record.mjs
// Optional: CHROME=/path/to/chromium-headless-shell
//
// For every case the same command sequence is run against a JSON-mode browser
// (--remote-debugging-pipe) and a CBOR-mode browser
// (--remote-debugging-pipe=cbor); the raw bytes of the same logical message
// are written to <name>.json (without the trailing NUL) and <name>.cbor (the
// whole envelope exactly as read from fd 4).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIR = path.dirname(fileURLToPath(import.meta.url));
const CHROME = process.env.CHROME || '/usr/lib/chromium/chromium-headless-shell';
const TIMEOUT_MS = 20000;

// ---------------------------------------------------------------- cleanup
const live = new Set(); // {proc, profile}
function cleanup(b) {
  try { if (b.proc.exitCode === null && b.proc.signalCode === null) b.proc.kill('SIGKILL'); } catch {}
  try { fs.rmSync(b.profile, { recursive: true, force: true }); } catch {}
  live.delete(b);
}
function cleanupAll() { for (const b of [...live]) cleanup(b); }
process.on('exit', cleanupAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { cleanupAll(); process.exit(130); });

// ---------------------------------------------------------------- CBOR (crdtp dialect)
const head = (mt, n) => {
  if (n < 24) return Buffer.from([mt << 5 | n]);
  if (n < 256) return Buffer.from([mt << 5 | 24, n]);
  if (n < 65536) { const b = Buffer.alloc(3); b[0] = mt << 5 | 25; b.writeUInt16BE(n, 1); return b; }
  const b = Buffer.alloc(5); b[0] = mt << 5 | 26; b.writeUInt32BE(n, 1); return b;
};
const envelope = body => { const h = Buffer.from([0xd8, 0x18, 0x5a, 0, 0, 0, 0]); h.writeUInt32BE(body.length, 3); return Buffer.concat([h, body]); };
function encode(v) {
  if (v === null) return Buffer.from([0xf6]);
  if (v === true) return Buffer.from([0xf5]);
  if (v === false) return Buffer.from([0xf4]);
  if (typeof v === 'number') {
    if (Number.isInteger(v) && !Object.is(v, -0) && v >= -(2 ** 31) && v < 2 ** 31) return v >= 0 ? head(0, v) : head(1, -1 - v);
    const b = Buffer.alloc(9); b[0] = 0xfb; b.writeDoubleBE(v, 1); return b;
  }
  if (typeof v === 'string') { const b = Buffer.from(v, 'utf8'); return Buffer.concat([head(3, b.length), b]); }
  if (Array.isArray(v)) return envelope(Buffer.concat([Buffer.from([0x9f]), ...v.map(encode), Buffer.from([0xff])]));
  return envelope(Buffer.concat([Buffer.from([0xbf]), ...Object.entries(v).flatMap(([k, x]) => [encode(k), encode(x)]), Buffer.from([0xff])]));
}

// Generic decoder (also accepts definite lengths / other tags so that the
// stats below can report anything unexpected). Untagged byte strings are
// UTF-16LE strings; tag 22 + byte string is binary, rendered as base64.
function decode(b, st = null) {
  const p = { i: 0 };
  const S = st || newStats();
  const v = item(b, p, S, 0);
  if (p.i !== b.length) throw new Error(`trailing bytes at ${p.i}/${b.length}`);
  return v;
}
function newStats() {
  return { envelopes: 0, envMaps: 0, envArrays: 0, bareIndefMaps: 0, bareIndefArrays: 0, definiteMaps: 0, definiteArrays: 0,
    tags: {}, utf8Strings: 0, utf16Strings: 0, utf16NonAscii: 0, binary: 0, doubles: 0, ints: 0, simple: {}, envLenMismatch: 0,
    utf16OddLen: 0, utf16Keys: 0 };
}
function arg(b, p, ai) {
  if (ai < 24) return ai;
  if (ai === 24) return b[p.i++];
  if (ai === 25) { const n = b.readUInt16BE(p.i); p.i += 2; return n; }
  if (ai === 26) { const n = b.readUInt32BE(p.i); p.i += 4; return n; }
  if (ai === 27) { const n = b.readBigUInt64BE(p.i); p.i += 8; return Number(n); }
  if (ai === 31) return -1;
  throw new Error('bad additional info ' + ai);
}
function item(b, p, S, depth, isKey = false) {
  const start = p.i;
  const inEnv = p.inEnv; p.inEnv = false; // true only for the item right after an envelope header
  const ib = b[p.i++]; const mt = ib >> 5, ai = ib & 31;
  switch (mt) {
    case 0: S.ints++; return arg(b, p, ai);
    case 1: S.ints++; return -1 - arg(b, p, ai);
    case 2: {
      const n = arg(b, p, ai); const raw = b.subarray(p.i, p.i + n); p.i += n;
      S.utf16Strings++; if (n & 1) S.utf16OddLen++; if (isKey) S.utf16Keys++;
      const s = raw.toString('utf16le'); if (/[^\x00-\x7f]/.test(s)) S.utf16NonAscii++;
      return s;
    }
    case 3: { const n = arg(b, p, ai); const s = b.toString('utf8', p.i, p.i + n); p.i += n; S.utf8Strings++; return s; }
    case 4: {
      const n = arg(b, p, ai); const a = [];
      if (n < 0) { if (depth > 0 && !inEnv) S.bareIndefArrays++; while (b[p.i] !== 0xff) a.push(item(b, p, S, depth + 1)); p.i++; }
      else { S.definiteArrays++; for (let k = 0; k < n; k++) a.push(item(b, p, S, depth + 1)); }
      return a;
    }
    case 5: {
      const n = arg(b, p, ai); const o = {};
      const put = () => { const k = item(b, p, S, depth + 1, true); o[k] = item(b, p, S, depth + 1); };
      if (n < 0) { if (depth > 0 && !inEnv) S.bareIndefMaps++; while (b[p.i] !== 0xff) put(); p.i++; }
      else { S.definiteMaps++; for (let k = 0; k < n; k++) put(); }
      return o;
    }
    case 6: {
      const tag = arg(b, p, ai);
      S.tags[tag] = (S.tags[tag] || 0) + 1;
      if (tag === 24) { // envelope: must be followed by a byte string header (0x5a = 4-byte length)
        if (b[p.i] !== 0x5a) throw new Error(`envelope without 0x5a at ${start}: ${b[p.i].toString(16)}`);
        const len = b.readUInt32BE(p.i + 1); p.i += 5;
        const bodyStart = p.i; S.envelopes++;
        if (b[p.i] === 0xbf) S.envMaps++; else if (b[p.i] === 0x9f) S.envArrays++;
        p.inEnv = true; const v = item(b, p, S, depth);
        if (p.i - bodyStart !== len) S.envLenMismatch++;
        return v;
      }
      if (tag === 22) { const ib2 = b[p.i]; if (ib2 >> 5 !== 2) throw new Error('tag 22 not followed by byte string');
        const n = arg(b, p, b[p.i++] & 31); const s = b.subarray(p.i, p.i + n).toString('base64'); p.i += n; S.binary++; return s; }
      return { [`tag${tag}`]: item(b, p, S, depth) };
    }
    case 7: {
      if (ai === 20) { S.simple.false = (S.simple.false || 0) + 1; return false; }
      if (ai === 21) { S.simple.true = (S.simple.true || 0) + 1; return true; }
      if (ai === 22) { S.simple.null = (S.simple.null || 0) + 1; return null; }
      if (ai === 27) { S.doubles++; const x = b.readDoubleBE(p.i); p.i += 8; return x; }
      if (ai === 26) { S.simple.float32 = (S.simple.float32 || 0) + 1; const x = b.readFloatBE(p.i); p.i += 4; return x; }
      throw new Error('unexpected simple/float ai=' + ai + ' at ' + start);
    }
  }
}

// ---------------------------------------------------------------- browser client
async function launch(mode) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), `cdpcbor-rec-${mode}-`));
  const args = [mode === 'cbor' ? '--remote-debugging-pipe=cbor' : '--remote-debugging-pipe',
    '--no-sandbox', `--user-data-dir=${profile}`, '--disable-background-networking', '--no-first-run',
    '--window-size=1280,720', '--enable-begin-frame-control', '--run-all-compositor-stages-before-draw',
    '--disable-gpu', '--hide-scrollbars', '--mute-audio'];
  const proc = spawn(CHROME, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  const b = { proc, profile, mode };
  live.add(b);
  let stderr = '';
  proc.stderr.on('data', d => { stderr = (stderr + d).slice(-4000); });
  const out = proc.stdio[3], inp = proc.stdio[4];
  out.on('error', () => {});
  // Recorded commands use ids 1,2,3...; frame pumping (whose count depends on
  // timing) uses a separate range so that recorded ids match across modes.
  let nextId = 0, nextAuxId = 100000; const pending = new Map(); const events = []; const waiters = [];
  let dead = null;
  const fail = err => {
    dead = err;
    for (const p of pending.values()) p.reject(dead); pending.clear();
    for (const w of waiters) w.reject(dead); waiters.length = 0;
  };
  proc.on('error', e => fail(new Error(`${mode} browser failed to start: ${e.message}`)));
  proc.on('exit', (code, sig) => fail(new Error(`${mode} browser exited code=${code} sig=${sig}\n${stderr}`)));
  const onMessage = (raw) => {
    const msg = mode === 'cbor' ? decode(raw) : JSON.parse(raw.toString('utf8'));
    if (msg.id !== undefined) {
      const p = pending.get(msg.id); if (!p) return; pending.delete(msg.id);
      p.resolve({ raw, msg });
    } else {
      const ev = { raw, msg, seq: events.length }; events.push(ev);
      for (let k = waiters.length - 1; k >= 0; k--) if (waiters[k].pred(ev)) { waiters[k].resolve(ev); waiters.splice(k, 1); }
    }
  };
  let buf = Buffer.alloc(0); let chunks = [];
  inp.on('data', d => {
    if (mode === 'cbor') {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      while (buf.length >= 7) {
        if (buf[0] !== 0xd8 || buf[1] !== 0x18 || buf[2] !== 0x5a) throw new Error('bad envelope start: ' + buf.subarray(0, 8).toString('hex'));
        const n = buf.readUInt32BE(3); if (buf.length < 7 + n) break;
        const msg = Buffer.from(buf.subarray(0, 7 + n)); buf = buf.subarray(7 + n);
        onMessage(msg);
      }
    } else {
      let s = 0;
      for (let i = d.indexOf(0); i >= 0; s = i + 1, i = d.indexOf(0, s)) {
        chunks.push(d.subarray(s, i)); const raw = Buffer.concat(chunks); chunks = []; onMessage(raw);
      }
      if (s < d.length) chunks.push(Buffer.from(d.subarray(s)));
    }
  });
  const withTimeout = (pr, what) => {
    let t; const to = new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`${mode}: timeout waiting for ${what}`)), TIMEOUT_MS); });
    return Promise.race([pr, to]).finally(() => clearTimeout(t));
  };
  // send resolves to {raw, msg} for the reply (errors are NOT thrown).
  const send = (method, params = {}, sessionId, aux = false) => {
    if (dead) return Promise.reject(dead);
    const m = { id: aux ? ++nextAuxId : ++nextId, method, params, ...(sessionId && { sessionId }) };
    const pr = new Promise((resolve, reject) => pending.set(m.id, { resolve, reject }));
    out.write(mode === 'cbor' ? encode(m) : JSON.stringify(m) + '\0');
    return withTimeout(pr, method);
  };
  // call throws on protocol error and returns the result.
  const call = async (method, params, sessionId) => {
    const r = await send(method, params, sessionId);
    if (r.msg.error) throw new Error(`${mode}: ${method}: ${JSON.stringify(r.msg.error)}`);
    return r.msg.result;
  };
  const waitEvent = (pred, what) => {
    const have = events.find(pred); if (have) return Promise.resolve(have);
    if (dead) return Promise.reject(dead);
    return withTimeout(new Promise((resolve, reject) => waiters.push({ pred, resolve, reject })), what);
  };
  return { ...b, send, call, events, waitEvent, close: () => cleanup(b) };
}

// ---------------------------------------------------------------- the scenario
const sleep = ms => new Promise(r => setTimeout(r, ms));
const UNICODE_URL = pathToFileURL(path.join(DIR, 'unicode.html')).href;
const TINY_PAGE = 'data:text/html,' + encodeURIComponent(
  '<html><body style="margin:0;background:#2a6"><div style="width:32px;height:32px;background:#c33"></div>x</body></html>');

const LONE_SURROGATE_EXPR = "'a\\ud800b' + String.fromCharCode(0xdfff) + '\\u0000\\u001f\\u007f\\u2028'";
const NUMBERS_EXPR = `({
  zero: 0, minusOne: -1, int32Max: 2147483647, int32Min: -2147483648,
  int32MaxPlus1: 2147483648, int32MinMinus1: -2147483649,
  oneAndHalf: 1.5, negZero: -0, big: 1e21, small: 1e-7, twelveDigits: 123456789012,
  maxSafe: Number.MAX_SAFE_INTEGER, pointThree: 0.1 + 0.2,
  list: [0, -0, 1.5, [1, [2, []], {}], {a: [], b: {}}, 2147483648, -2147483649],
  nested: {empty: {}, emptyList: [], deep: {x: [[[-1]]], y: {z: {}}}},
})`;

// Runs the scenario; returns {name: rawBytes}.
async function scenario(mode) {
  const br = await launch(mode);
  const rec = {};
  try {
    const { send, call, waitEvent } = br;
    rec.version = (await send('Browser.getVersion')).raw;

    await call('Target.setDiscoverTargets', { discover: false }).catch(() => {});
    const { targetId } = await call('Target.createTarget', { url: 'about:blank', enableBeginFrameControl: true, width: 1280, height: 720 });
    const { sessionId: S } = await call('Target.attachToTarget', { targetId, flatten: true });
    rec['event-attached-to-target'] = (await waitEvent(e => e.msg.method === 'Target.attachedToTarget', 'Target.attachedToTarget')).raw;

    await call('Page.enable', {}, S);
    await call('Page.setLifecycleEventsEnabled', { enabled: true }, S);
    await call('Runtime.enable', {}, S);
    await call('DOM.enable', {}, S);

    // Keep frames flowing while navigating (begin-frame control: nothing is
    // drawn otherwise), until the load event arrives.
    const navigate = async (url) => {
      let loaded = false;
      const from = br.events.length;
      const load = waitEvent(e => e.msg.method === 'Page.loadEventFired' && e.msg.sessionId === S && e.seq >= from, 'Page.loadEventFired')
        .then(() => { loaded = true; });
      await call('Page.navigate', { url }, S);
      while (!loaded) {
        await send('HeadlessExperimental.beginFrame', {}, S, true);
        await Promise.race([load, sleep(20)]);
      }
      for (let k = 0; k < 3; k++) await send('HeadlessExperimental.beginFrame', {}, S, true);
    };

    await navigate(UNICODE_URL);
    rec['event-lifecycle'] = (await waitEvent(e => e.msg.method === 'Page.lifecycleEvent' && e.msg.params.name === 'DOMContentLoaded', 'lifecycle DOMContentLoaded')).raw;

    rec['snapshot-unicode'] = (await send('DOMSnapshot.captureSnapshot', { computedStyles: ['display', 'cursor', 'opacity'], includePaintOrder: true }, S)).raw;

    rec['evaluate-lone-surrogate'] = (await send('Runtime.evaluate', { expression: LONE_SURROGATE_EXPR, returnByValue: true }, S)).raw;
    rec['evaluate-numbers'] = (await send('Runtime.evaluate', { expression: NUMBERS_EXPR, returnByValue: true }, S)).raw;

    await call('Runtime.evaluate', { expression: "console.log('x\\u00e9\\ud83d\\ude00')" }, S);
    rec['event-console'] = (await waitEvent(e => e.msg.method === 'Runtime.consoleAPICalled', 'Runtime.consoleAPICalled')).raw;

    rec.error = (await send('DOM.getBoxModel', { backendNodeId: 999999 }, S)).raw;

    await call('Emulation.setDeviceMetricsOverride', { width: 64, height: 64, deviceScaleFactor: 1, mobile: false }, S);
    await navigate(TINY_PAGE);
    for (let k = 0; k < 5; k++) await send('HeadlessExperimental.beginFrame', {}, S, true);
    const shot = await send('HeadlessExperimental.beginFrame', { screenshot: { format: 'jpeg', quality: 80 } }, S);
    if (!shot.msg.result || !shot.msg.result.screenshotData) throw new Error(`${mode}: beginFrame produced no screenshot: ${JSON.stringify(shot.msg)}`);
    rec.screenshot = shot.raw;
    return rec;
  } finally {
    br.close();
  }
}

// ---------------------------------------------------------------- compare helpers
// Fields whose values legitimately differ between two browser runs.
const VOLATILE = new Set(['timestamp', 'sessionId', 'targetId', 'frameId', 'loaderId', 'browserContextId', 'openerId',
  'executionContextId', 'screenshotData', 'uniqueContextId', 'objectId', 'scriptId', 'documentURL', 'baseURL']);
function diff(a, b, at = '$', out = []) {
  if (out.length > 20) return out;
  const key = at.slice(at.lastIndexOf('.') + 1);
  if (VOLATILE.has(key)) return out;
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) { out.push(`${at}: type ${JSON.stringify(a)?.slice(0, 60)} vs ${JSON.stringify(b)?.slice(0, 60)}`); return out; }
  if (a && typeof a === 'object') {
    const ka = Object.keys(a), kb = Object.keys(b);
    if (ka.join() !== kb.join()) out.push(`${at}: keys ${ka} vs ${kb}`);
    for (const k of ka) if (k in b) diff(a[k], b[k], `${at}.${k}`, out);
    return out;
  }
  if (!Object.is(a, b)) out.push(`${at}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}${Object.is(a, -0) || Object.is(b, -0) ? ' (-0)' : ''}`);
  return out;
}

// ---------------------------------------------------------------- main
async function main() {
  const json = await scenario('json');
  const cbor = await scenario('cbor');
  const names = Object.keys(json);
  if (names.join() !== Object.keys(cbor).join()) throw new Error('case lists differ');
  let total = 0;
  for (const n of names) {
    fs.writeFileSync(path.join(DIR, `${n}.json`), json[n]);
    fs.writeFileSync(path.join(DIR, `${n}.cbor`), cbor[n]);
    total += json[n].length + cbor[n].length;
    const st = newStats();
    const dv = decode(cbor[n], st);
    const jv = JSON.parse(json[n].toString('utf8'));
    const d = diff(jv, dv);
    const tags = Object.entries(st.tags).map(([k, v]) => `${k}x${v}`).join(',');
    console.log(`${n.padEnd(26)} json=${String(json[n].length).padStart(7)} cbor=${String(cbor[n].length).padStart(7)} ` +
      `env=${st.envelopes}(maps ${st.envMaps}, arrays ${st.envArrays}) bareIndef=${st.bareIndefMaps}/${st.bareIndefArrays} definite=${st.definiteMaps}/${st.definiteArrays} ` +
      `tags=[${tags}] utf8=${st.utf8Strings} utf16=${st.utf16Strings}(nonascii ${st.utf16NonAscii}, keys ${st.utf16Keys}, odd ${st.utf16OddLen}) bin=${st.binary} dbl=${st.doubles} envLenBad=${st.envLenMismatch}`);
    if (d.length) console.log('   json vs decoded cbor differences:\n     ' + d.join('\n     '));
  }
  console.log(`total ${total} bytes`);
}

main().then(() => { cleanupAll(); process.exit(0); }, e => { console.error(e); cleanupAll(); process.exit(1); });
