// Package websurfer is a browsing session that a program drives by typed
// actions or by the agent loop.
//
// It holds a browsing session's state (tabs, history, pending events),
// turns the active page into an observation the model can read (the
// accessibility-derived element list, the visible text and a set-of-mark
// screenshot, within a token budget), carries out the actions of surf's
// fixed action space, and runs the agent loop that observes, asks the
// model, passes each call through the policy gate and acts, writing a
// journal as it goes.
package websurfer
