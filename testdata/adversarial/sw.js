// Service worker for service-worker.html: fetches the canary on install and
// on every fetch it intercepts.
self.addEventListener("install", e => e.waitUntil(fetch("{{.C}}/c/{{.Attack}}/sw-install").catch(() => {})));
self.addEventListener("fetch", e => e.respondWith(fetch("{{.C}}/c/{{.Attack}}/sw-fetch")));
