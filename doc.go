// Package surf maps the packages of surf, a sandboxed browser-automation
// runtime for LLM agents, by tier.
//
// It holds no code; its tests keep the module's shape: the import rules of
// the tiers, the Go API guide's program building in a module of its own
// with surf's patched Playwright, and installs from a module path.
//
// Public packages, for programs that embed surf:
//
//   - websurfer: a browsing session driven by actions or by the agent loop;
//     Launch opens one in a browser of its own.
//   - perception: the page model and observation text, from decoded CDP payloads, with no browser.
//   - journal: a run's journal: entry types, reading and writing.
//   - tools: the action space as typed tools, with schemas and a validating registry.
//   - policy: the gate: which navigations, requests, connections and tool calls may happen.
//   - sandbox: the browser process surf owns, and isolated sessions that enforce a policy.
//   - som: set-of-mark drawing on screenshots.
//   - board: the task board: tasks with dependencies, workers with leases, on NATS JetStream.
//   - worker: the surfer of a board task: runs claimed tasks in one shared browser (what surf work runs).
//   - board/plan: the planner on the board: ledgers, a DAG of tasks, progress calls that re-plan or answer (what surf plan runs).
//   - telemetry: Prometheus metrics and OpenTelemetry tracing set-up, and the trace context carried through task records.
//
// Low-level libraries (internal/), which import no public surf package:
//
//   - internal/bounded: waits bounded in time for calls that may never return.
//   - internal/cdpmux: one local browser's DevTools pipe shared by Playwright and surf.
//   - internal/jpegpatch: editing baseline JPEG blocks in place.
//   - internal/tokens: o200k token counting and budgets.
//   - internal/llm: the model client: OpenAI-compatible, retries, cassettes, context fitting.
//   - internal/textcut: cutting strings for display.
//   - internal/proc: process questions (alive, by environment, command line).
//   - internal/admit: turns at the browser: how much browser work runs at once.
//   - internal/termsafe: page- and file-derived text made safe to print on a terminal.
//   - internal/taskref: references to other tasks' results in a board task's instruction ({{B.answer}}).
//
// Internal libraries of the public packages (internal/), which may import
// public packages:
//
//   - internal/report: a run's journal as one HTML page.
//   - internal/away: lets a call's or task's turn at the browser go while it waits on the model or a person.
//   - internal/login: saved logins: the flow of surf login (a person signs in, the state file is saved) and the --state flags' key resolution (passphrase file, identity file, $SURF_STATE_PASSPHRASE).
//
// Applications, with the CLI (cmd/surf/internal/):
//
//   - cmd/surf: the surf command.
//   - cmd/surf/internal/mcpserver: surf as an MCP server.
//   - cmd/surf/internal/daemon: the background session daemons behind surf open/click/close, and starting them.
//   - cmd/surf/internal/session: what a session daemon does with its browser, the session commands' requests, and their client side (find, call, connect-or-start, close).
//   - cmd/surf/internal/shell: the read-act-print loop of surf shell and its line parser.
//   - cmd/surf/internal/policycheck: judging URLs for surf policy check, from the command line or JSON lines; the policy of the policy flags and advice for a denied URL.
//   - cmd/surf/internal/prompt: asking a person at the terminal to approve what the policy marks "ask".
//   - cmd/surf/internal/demosite: the bundled demo website and surf demo's scripted tour of it.
//   - cmd/surf/internal/live: the hub of live sessions: state, timeline, approvals, takeover.
//   - cmd/surf/internal/liveui: the live view's web UI.
//   - cmd/surf/internal/bench: the measuring of surf bench (observe, sessions, board, actions).
//   - cmd/surf/internal/benchsite: the fixture site of surf bench actions.
//   - cmd/surf/internal/boardcli: the rendering of surf board: list's and watch's tables, show's record, a run's files for report.
//   - cmd/surf/internal/plancli: what surf plan and surf board show print of a plan, and surf plan --review's reviewer.
//   - cmd/surf/internal/recording: surf record's served site, page summaries and HAR summary.
//
// Test helpers (internal/testkit/):
//
//   - internal/testkit/browsertest: one real browser per test binary, a fresh session per test.
//   - internal/testkit/fakeopenai: a scripted OpenAI-compatible server.
//
// Vendored fork:
//
//   - third_party/playwright-go: playwright-go v0.5200.1 with the fixes surf needs (see its PATCHES.md).
//
// docs/DESIGN.md holds the design notes and measurements, package by package;
// the README links the guides in docs/.
package surf
