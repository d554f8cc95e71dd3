// Package websurfer is a browsing session that a program drives by typed
// actions or by the agent loop.
//
// A [Surfer] holds one session's state (tabs, history, pending events and
// dialogs) over a [sandbox.Session]. [Surfer.Observe] captures the active
// page from Chromium in named phases and hands the payloads to package
// perception, which numbers the elements and writes the observation text;
// websurfer draws the set-of-mark image. Every action of surf's fixed
// action space goes through one path (resolve the element, gate, act,
// settle, observe); refusals the model sees are typed errors
// ([CoveredError], [OffscreenError], [StaleError], [NotEditableError],
// policy denials). [Surfer.Run] is the one door into the agent loop: it
// observes, asks the model, passes each call through the policy gate and
// acts, writing a journal (package journal) as it goes.
package websurfer
