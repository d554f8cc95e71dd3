// Package sandbox owns the browser surf drives and hands out isolated
// sessions that enforce a policy on everything the browser sends.
//
// New finds Chromium and the Playwright driver (Install fetches the driver
// from the npm registry, never from a CDN) and launches Chromium as a
// process surf owns (its own process group, in bubblewrap, killed when
// surf dies, its temp profile removed on Close), or connects to a remote
// browser (Config.Connect, Config.CDP). NewSession opens a browser context
// with its own cookies, storage and downloads directory, guarded by three
// enforcement layers: the request gate, a per-session egress proxy and the
// OS sandbox. Each is on by default and off only through its own Config
// field; one that cannot be set up stops the session from starting.
// Sessions can record what they load to a HAR file and replay it offline,
// and keep a login between runs in a state file (StateFile: Playwright's
// storage state, filtered by the policy, optionally age-encrypted).
//
// A program that launches a local browser calls RunLauncher first in its
// main (test binaries in TestMain): surf starts the browser through the
// program's own binary, and New refuses with ErrNoLauncher without it.
//
// docs/DESIGN.md ("sandbox") describes the launcher, each enforcement
// layer, what each layer stops (measured by the adversarial tests), the
// DevTools relay, recordings, saved identity and the known limits.
package sandbox
