// Shared worker for shared-worker.html.
const C = "{{.C}}/c/{{.Attack}}";
fetch(C + "/shared-fetch").catch(() => {});
fetch("/hop?n=1&code=302&to=" + encodeURIComponent(C + "/shared-chain")).catch(() => {});
onconnect = e => {
  const port = e.ports[0];
  fetch("/ok/{{.Attack}}/shared-fetch").then(r => r.text()).then(t => port.postMessage(t));
};
