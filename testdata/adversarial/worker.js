// Dedicated worker for worker.html.
const C = "{{.C}}/c/{{.Attack}}";
fetch(C + "/worker-fetch").catch(() => {});
fetch("/hop?n=2&code=302&to=" + encodeURIComponent(C + "/worker-chain")).catch(() => {});
try { new WebSocket("ws://127.0.0.2:{{.CPort}}/c/{{.Attack}}/worker-ws"); } catch (e) {}
try { importScripts(C + "/worker-import.js"); } catch (e) {}
fetch("/ok/{{.Attack}}/worker-fetch").then(r => r.text()).then(t => postMessage(t));
