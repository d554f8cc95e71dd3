// Package sandbox provisions and owns the browser surf drives: it finds
// Chromium and the Playwright driver on the machine (installing the driver
// from the npm registry, never from a CDN), launches Chromium as a process
// surf owns (its own process group, killed when surf dies, temp profile
// removed on close) or connects to a remote browser (a Playwright server or
// a Chrome DevTools endpoint), and hands out isolated sessions: browser
// contexts with their own cookies, storage and downloads directory, each
// enforcing a policy (package policy) on everything the browser sends.
//
// # Enforcement layers
//
// A session enforces its policy, Config.Policy narrowed by
// SessionConfig.Policy (nil: public hosts allowed, private networks,
// loopback included, denied), in three layers. Each is on by default; each
// can be turned off only by its own Config field (DisableRequestGate,
// DisableEgressProxy, DisableOSSandbox), and Info says which are on and
// why not. A layer that is on but cannot be set up stops the sandbox or the
// session from starting. (A fourth, the action gate, judges the model's
// tool calls in package websurfer, before the browser is asked to do
// anything; it records its denials with Session.RecordDenial.)
//
// The request gate judges every request of every frame, popup and
// dedicated worker before the browser sends it, including each hop of a
// redirect chain. It is a Playwright context route (which sees every
// target's first requests, because Playwright holds new targets until its
// interception is in place, but is not called for redirect hops) plus
// surf's own CDP Fetch interception on each page and out-of-process
// iframe (which sees every request that starts after it is installed,
// hops included, and sees it first). A popup's first navigation, which
// starts before surf's interception can be installed, is answered with a
// tiny document that re-issues it under that interception. Denied
// navigations get a block page that says what was blocked and why (never
// the content); other requests fail as blocked by the client. WebSockets
// are judged by Playwright's WebSocket route in pages. data: and blob:
// documents, which involve no request, are judged when they commit and a
// denied one is replaced at once. Service workers are blocked for the
// whole context, and network prediction (preconnect, DNS prefetch,
// speculation-rules prefetch) is off, since those open connections the
// gate never sees as requests.
//
// The egress proxy is an in-process HTTP and CONNECT proxy. Every session
// has its own, on ProxyListen (127.0.0.1 by default) with its own random
// credentials, enforcing that session's policy; a local browser is also
// launched with a proxy enforcing the sandbox's policy for anything
// outside the sessions, with credentials of its own too (every local user
// can reach a loopback port). A host the session's policy marks Ask is
// refused by every layer until Session.Approve opens it for the session.
// Loopback goes through the proxy too (surf removes Chromium's implicit
// loopback bypass and never adds one). The proxy
// resolves names itself (Config.Resolver), refuses a name the policy
// denies before looking it up, judges every resolved address with
// policy.DecideDial and connects only to an address it judged, so DNS
// rebinding to a private address fails. A local browser resolves no names
// itself (--host-resolver-rules), and runs without QUIC and with WebRTC
// limited to proxied TCP (flag and preference), so no UDP leaves it.
// Denials are 403 answers (a refused tunnel for CONNECT). Headers are
// bounded, streams end after 5 minutes idle, connections are capped, and
// a proxy closes with its session.
//
// The OS sandbox runs a local Chromium inside bubblewrap (bwrap): the file
// system read-only, /tmp, /var/tmp, /home, /root and the user's home
// directory replaced by empty tmpfs, only the sandbox's own temp dir (the
// browser's HOME and downloads), the profile Playwright chose and, read
// only, the upload staging directory (Session.StageUpload) visible; its
// own pid, IPC and UTS namespaces; killed with its parent. It shares the
// network namespace, to reach the proxy. As root, it also gets a user
// namespace where it runs as an unprivileged user, so that Chromium's own
// sandbox can run. A bwrap that is missing or fails stops the sandbox with
// a *LayerError, unless Config.DisableOSSandbox turned it off. Remote
// browsers have no OS sandbox, and surf cannot set their flags or
// preferences: there the request gate and the session proxies apply, but
// WebRTC UDP and QUIC are whatever the remote browser allows.
//
// # What each layer stops
//
// Measured by the adversarial tests (testdata/adversarial, run by
// adversarial_test.go): fixture pages on allowed loopback sites try to
// reach a canary on 127.0.0.2 that the policy does not allow; the canary
// counts TCP connections, HTTP requests and UDP packets. "stopped" means
// the canary saw nothing at all. With every layer on, every attack is
// stopped and every page's allowed requests still succeed; with the canary
// allowed, the attacks reach it (the control).
//
//	attack                    no layer  request gate  egress proxy  all layers:
//	                                    alone         alone         reported by
//	redirect chains 301..308  reached   stopped       stopped       redirect
//	  (by a page, or typed)
//	navigation to the canary  reached   stopped       stopped       request
//	meta refresh, JS location reached   stopped       stopped       request
//	window.open (direct, and  reached   stopped       stopped       request,
//	  allowed -> canary)                                            redirect
//	iframes (direct, chain)   reached   stopped       stopped       request,
//	                                                                redirect
//	cross-site iframe whose   reached   not reliably  stopped       request,
//	  subresources redirect                                         proxy
//	img, script, css, font,   reached   stopped       stopped       request,
//	  media, object, icon                                           redirect
//	fetch, XHR, sendBeacon,   reached   stopped       stopped       request,
//	  keepalive, EventSource                                        redirect
//	WebSocket (page, fresh    reached   stopped       stopped       request
//	  frame)
//	prefetch, preconnect,     reached   stopped       stopped       request
//	  preload, speculation
//	form POST (direct, 307)   reached   stopped       stopped       request,
//	                                                                redirect
//	userinfo trick            reached   stopped       stopped       request
//	IP literal forms          reached   stopped       stopped       request
//	data:, blob:, javascript: reached   stopped       stopped       request
//	dedicated worker (fetch,  reached   reached (its  stopped       request,
//	  import, WebSocket)                WebSocket)                  redirect, proxy
//	shared worker             reached   reached       stopped       proxy
//	WebRTC (STUN over UDP,    reached   reached       stopped       proxy (TCP;
//	  TURN over TCP)                                                no UDP sent)
//	DNS rebinding             reached   reached       stopped       proxy
//	service worker            blocked for the context in every configuration
//
// The request gate alone misses what is not a request to Playwright or to
// a page's Fetch domain: shared workers, WebSockets opened by workers,
// WebRTC, and a name the policy allows that resolves to a private
// address; and the redirect hops of the first subresources of a
// cross-site iframe (they start before surf's interception is on the
// iframe's target). The egress proxy alone stops every attack above, but
// sees only hosts and (for plain HTTP) URLs, not what a page is: it cannot
// show a block page, tell navigations from subresources, or judge data:
// and blob: documents. Together they fail closed at both ends: the gate
// before the browser sends, the proxy before a byte leaves the machine.
// The OS sandbox stops none of these (it shares the network); it stops
// reads of the home directory through file: URLs (which the request gate
// also denies) and writes outside the browser's own directories.
//
// # The DevTools relay
//
// Playwright drives a local Chromium over a pipe (--remote-debugging-pipe)
// through its node driver, which parses every reply and encodes it again
// for the Go client. For the observation's large replies (a DOM snapshot
// of megabytes, a screenshot) that relay cost more than the commands. So
// the launcher, on Linux, makes a second pipe pair for the browser and
// passes the driver's pipe ends and the new pair's far ends to surf's
// process over a Unix socket in a fresh private directory, with a one-time
// token, before it execs the browser. surf relays between the two (package
// internal/cdpmux): the driver's traffic passes unchanged, and
// Session.DevTools opens surf's own sessions on the same pipe, whose
// replies come straight back as raw JSON. No port is opened and nothing
// new is reachable from the browser or the machine; if the hand-over
// fails, the launch fails. Remote browsers have no relay: Session.DevTools
// returns ErrNoDevTools and surf reads them through Playwright.
//
// # Recordings
//
// A session can record what it loads, and a later session can replay it
// offline and deterministically. SessionConfig.RecordHAR writes, when the
// session closes, Playwright's HAR (HTTP Archive) of every response the
// session got from the network, bodies embedded (text as is, binary in
// base64); SessionConfig.ReplayHAR answers every request of a session
// from such a file. The CLI's "surf record" records a list of URLs.
//
// A recording leaves out what did not come from the network (the request
// gate's block pages and re-issue documents), requests that got no
// response, and responses whose body was cut short (the page moved on
// before it arrived). It never holds the session proxy's credentials
// (Chromium reports them among the request headers), and the policy's
// secrets are replaced by their placeholders in every text of it (so a
// POST that carried a secret does not match in replay). Limits: an entry
// larger than 16 MiB (as JSON) is left out, and so is every entry after
// 256 MiB of them; the HAR's log.comment then says how many, and replay
// reports them as not in recording.
//
// Replay reads the whole file when the session starts (a file surf cannot
// replay stops the session: not a HAR, a zip archive, bodies in files
// beside it) and answers each request the way Playwright's HAR router
// does: the same method and URL (the fragment aside), the same body for a
// POST (a multipart boundary aside), of several such entries the one with
// the most request headers in common; redirects are followed inside the
// recording, and a navigation that ends at another URL is re-issued there.
// surf answers from its own route rather than Playwright's RouteFromHAR,
// whose Go port hands binary bodies to Route.Fulfill as text and corrupts
// them.
//
// The policy still applies in replay: surf's Fetch interception and the
// request gate judge a request before the replay's route sees it, and the
// replay's route judges it again, with each redirect hop the recording
// would follow (so the policy holds with the request gate off too). What
// the policy denies is denied even when the recording holds it. A request
// the recording does not hold never goes to the network: a navigation
// gets a "Not in recording" page (status 404), anything else fails as
// blocked by the client, WebSockets are closed, and each is a LayerReplay
// denial whose reason reads "not in recording: URL". The session's egress
// proxy is offline in replay: it refuses every request and tunnel (a
// LayerReplay denial too), so a request that escapes the routes reaches
// nothing but the proxy on loopback. With the egress proxy disabled, that
// last net is gone.
//
// Known limits: Playwright answers every HTTP authentication challenge
// with the session proxy's credentials, so a site can learn them; they
// keep other local programs off a session's proxy, they are not a secret
// from pages (the proxy enforces the policy whoever uses it). javascript:
// URLs run script in the page and send nothing by themselves. Chromium's
// own sandbox runs as root only inside the OS sandbox (Info.ChromiumSandbox
// says how it runs).
package sandbox
