package websurfer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/telemetry"
	"github.com/surfkit/surf/tools"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of RunOptions' zero values.
const (
	DefaultMaxSteps        = 25
	DefaultMaxTokens       = 500_000
	DefaultMaxTime         = 15 * time.Minute
	DefaultToolTimeout     = 60 * time.Second
	DefaultModelTimeout    = 2 * time.Minute
	DefaultContextTokens   = 48_000
	DefaultBreakerFailures = 3
	DefaultBreakerCooldown = 3
	DefaultStallRepeats    = 2
	DefaultNoProgressSteps = 6
	// DefaultAnswerTries is how many structured answers that do not
	// match the output schema a run takes before it ends failed.
	DefaultAnswerTries = 3
	// DefaultHandedOnBytes is how much of each handed-on answer (and of
	// its structured result) the model sees.
	DefaultHandedOnBytes = 4000
)

// HandedOn is the result of a task that the run's task runs after: its
// answer and structured result, given to the model as quoted data.
type HandedOn struct {
	Task   string
	Answer string
	Data   json.RawMessage
}

// RunOptions configures a run of the agent loop (Surfer.Run); every zero
// value is a documented default, never "unbounded".
type RunOptions struct {
	// Model decides each step; nil means the surfer's Config.Model.
	Model Model
	// ModelName is sent with each request; empty means the surfer's.
	ModelName string
	// StartURL is opened (through the policy) before the first step.
	StartURL string

	// MaxSteps bounds the steps (model calls); zero means
	// DefaultMaxSteps.
	MaxSteps int
	// MaxTokens bounds the tokens the model reports spending, the
	// tools' own model calls included; zero means DefaultMaxTokens.
	MaxTokens int
	// MaxTime bounds the run's wall time; zero means DefaultMaxTime.
	MaxTime time.Duration
	// ToolTimeout bounds one tool call; zero means DefaultToolTimeout.
	ToolTimeout time.Duration
	// ModelTimeout bounds one model call, its retries included; zero
	// means DefaultModelTimeout.
	ModelTimeout time.Duration
	// MaxActionsPerStep is how many of a reply's tool calls run; zero
	// means 1. The others get a "not run" result.
	MaxActionsPerStep int
	// ContextTokens is the budget of each request: the system prompt and
	// the task are kept, then as many recent turns as fit; only the
	// latest observation keeps its screenshot. Zero means
	// DefaultContextTokens.
	ContextTokens int
	// ImageDetail is the detail of the screenshots sent ("auto", "low",
	// "high"); empty means "auto".
	ImageDetail openai.ImageURLDetail

	// BreakerFailures failures of a tool in a row withhold it for
	// BreakerCooldown steps; zeros mean the defaults.
	BreakerFailures int
	BreakerCooldown int
	// StallRepeats is how many times the same action on an unchanged page
	// earns a warning (and, after the warning, ends the run); zero means
	// DefaultStallRepeats.
	StallRepeats int
	// NoProgressSteps is how many steps without a new page state earn a
	// warning (and as many again end the run); zero means
	// DefaultNoProgressSteps.
	NoProgressSteps int

	// OutputSchema, if set, asks for a structured answer: stop_action
	// then takes a data argument that must match it. An answer that does
	// not goes back to the model as a tool error with the validator's
	// message; after AnswerTries such answers (zero means
	// DefaultAnswerTries) the run ends journal.EndFailed.
	OutputSchema *tools.OutputSchema
	AnswerTries  int
	// HandedOn are the results of the tasks this task runs after. The
	// model sees them after the task, redacted, each answer and result
	// cut to HandedOnBytes (zero means DefaultHandedOnBytes; with more
	// than six answers and results, the block's 6*HandedOnBytes are
	// shared evenly among them) and quoted as data, not instructions. The journal records the block
	// (journal.KindHandedOn).
	HandedOn      []HandedOn
	HandedOnBytes int

	// Journal records the run, if set.
	Journal *journal.Writer
	// Between, if set, is called before each step's observation but the
	// first: a live view pauses the run there while a person takes over
	// the browser (it may block as long as the takeover lasts; MaxTime
	// still runs). A non-empty note is given to the model with the next
	// observation ("The user took over the browser for 42s and handed it
	// back; ..."), redacted; the observation shows the page as the person
	// left it (tabs they opened are picked up as after an action). An
	// error ends the run like a runtime error.
	Between func(ctx context.Context) (note string, err error)
	// Relaunch replaces the browser session when the browser crashed or
	// disconnected; the run reopens the last page and goes on. Nil means
	// such a run ends with journal.EndError.
	Relaunch func(ctx context.Context) (*sandbox.Session, error)
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Step is one turn of a run: what surf saw, what the model chose, what the
// gate said and what happened.
type Step struct {
	N           int
	Observation *Observation
	// Content is the model's text, if any.
	Content   string
	Calls     []journal.Call
	Decisions []Decided
	Results   []CallResult
	// Usage is this step's model tokens; Total the run's so far.
	Usage journal.Usage
	Total journal.Usage
	// Notes are the corrections and warnings surf gave the model.
	Notes []string
	// Recovered says how a crash was recovered from, if one was.
	Recovered string
	Duration  time.Duration
	// Done is set on the last step, with why the run ended and, if it
	// was answered, the answer.
	Done      bool
	EndReason journal.EndReason
	Answer    string
	// Data is the structured answer, validated against
	// RunOptions.OutputSchema, when the run has one.
	Data json.RawMessage
	// Failure says why a run that ended journal.EndFailed failed.
	Failure string
}

// CallResult is what one tool call gave.
type CallResult struct {
	Tool     string
	Text     string
	IsError  bool
	Duration time.Duration
}

// Run runs the agent loop on this surfer: observe, ask the model which
// tool to call, pass the call through the policy gate, act, record, until
// the task is answered or a limit is reached. It yields each step; the
// last one has Done set and says why the run ended. A runtime error (the
// model unreachable after its retries, a browser that could not be
// recovered) ends the run and is yielded with that last step.
//
// Run is the one way into the agent loop. It is a method because a run
// always drives exactly one surfer (its session, policy, tools and model
// defaults), so there is no run without one. Each range over the returned
// iterator is a new run; runs on one surfer share its tabs and should not
// overlap.
func (s *Surfer) Run(ctx context.Context, task string, opts RunOptions) iter.Seq2[*Step, error] {
	return func(yield func(*Step, error) bool) {
		r, err := newRun(s, task, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		r.run(ctx, yield)
	}
}

type run struct {
	task  string
	o     RunOptions
	s     *Surfer
	model Model
	name  string
	reg   *tools.Registry
	log   *slog.Logger
	j     *journal.Writer

	msgs    []openai.ChatCompletionMessage
	total   journal.Usage
	notes   []string
	fails   map[string]int
	blocked map[string]int // tool -> step it is withheld until
	lastURL string
	fresh   *Observation // an observation taken by the last action
	// oversized holds the refusals of the step's tool calls whose
	// arguments were over the size cap, by call ID.
	oversized map[string]string

	data        json.RawMessage // the validated structured answer
	answerFails int             // structured answers refused so far
	failure     string          // set when the run must end failed

	// stepSpan is the span of the step under way (nil between steps).
	stepSpan trace.Span

	prevKey     string // previous step's action and page
	prevFP      string
	repeats     int
	warnedLoop  bool
	sameFor     int
	warnedStill bool
}

func newRun(s *Surfer, task string, o RunOptions) (*run, error) {
	if s == nil {
		return nil, errors.New("websurfer: Run on a nil *Surfer")
	}
	if strings.TrimSpace(task) == "" {
		return nil, errors.New("websurfer: the task is empty")
	}
	r := &run{task: task, o: o, s: s, model: o.Model, name: o.ModelName, j: o.Journal,
		fails: map[string]int{}, blocked: map[string]int{}}
	if r.model == nil {
		r.model = r.s.cfg.Model
	}
	if r.model == nil {
		return nil, errors.New("websurfer: Run needs a model (RunOptions.Model or Config.Model)")
	}
	if r.name == "" {
		r.name = r.s.cfg.ModelName
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&r.o.MaxSteps, DefaultMaxSteps)
	def(&r.o.MaxTokens, DefaultMaxTokens)
	def(&r.o.MaxActionsPerStep, 1)
	def(&r.o.ContextTokens, DefaultContextTokens)
	def(&r.o.BreakerFailures, DefaultBreakerFailures)
	def(&r.o.BreakerCooldown, DefaultBreakerCooldown)
	def(&r.o.StallRepeats, DefaultStallRepeats)
	def(&r.o.NoProgressSteps, DefaultNoProgressSteps)
	def(&r.o.AnswerTries, DefaultAnswerTries)
	def(&r.o.HandedOnBytes, DefaultHandedOnBytes)
	if r.o.MaxTime <= 0 {
		r.o.MaxTime = DefaultMaxTime
	}
	if r.o.ToolTimeout <= 0 {
		r.o.ToolTimeout = DefaultToolTimeout
	}
	if r.o.ModelTimeout <= 0 {
		r.o.ModelTimeout = DefaultModelTimeout
	}
	if r.o.ImageDetail == "" {
		r.o.ImageDetail = openai.ImageURLDetailAuto
	}
	if r.o.ContextTokens < 4000 {
		return nil, fmt.Errorf("websurfer: ContextTokens %d is too small for an observation and its screenshot (minimum 4000)", r.o.ContextTokens)
	}
	r.log = r.o.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.reg = r.s.Tools()
	return r, nil
}

// runConfig is what the journal records of a run's settings (no secrets:
// the policy's secret values are never in it).
type runConfig struct {
	Model             string          `json:"model,omitempty"`
	StartURL          string          `json:"start_url,omitempty"`
	MaxSteps          int             `json:"max_steps"`
	MaxTokens         int             `json:"max_tokens"`
	MaxTime           string          `json:"max_time"`
	ToolTimeout       string          `json:"tool_timeout"`
	MaxActionsPerStep int             `json:"max_actions_per_step"`
	ContextTokens     int             `json:"context_tokens"`
	TokenBudget       int             `json:"observation_tokens"`
	Secrets           []string        `json:"secrets,omitempty"` // names only
	OutputSchema      json.RawMessage `json:"output_schema,omitempty"`
	HandedOn          []string        `json:"handed_on,omitempty"` // task ids
	Session           any             `json:"session,omitempty"`
}

func (r *run) run(ctx context.Context, yield func(*Step, error) bool) {
	start := time.Now()
	parent := ctx
	var runSpan trace.Span
	ctx, runSpan = r.s.tracer().Start(ctx, "surf.run")
	if r.name != "" {
		runSpan.SetAttributes(telemetry.GenAIRequestModel.String(r.name))
	}
	ctx, cancel := context.WithTimeout(ctx, r.o.MaxTime)
	defer cancel()

	var schema json.RawMessage
	if r.o.OutputSchema != nil {
		schema = r.o.OutputSchema.JSON()
	}
	var from []string
	for _, h := range r.o.HandedOn {
		from = append(from, h.Task)
	}
	cfg, _ := json.Marshal(runConfig{
		OutputSchema: schema, HandedOn: from,
		Model: r.name, StartURL: r.o.StartURL, MaxSteps: r.o.MaxSteps, MaxTokens: r.o.MaxTokens,
		MaxTime: r.o.MaxTime.String(), ToolTimeout: r.o.ToolTimeout.String(), MaxActionsPerStep: r.o.MaxActionsPerStep,
		ContextTokens: r.o.ContextTokens, TokenBudget: r.s.cfg.TokenBudget, Secrets: r.s.pol.SecretNames(),
		Session: r.s.sess.Info(),
	})
	r.j.Write(journal.Entry{Event: journal.KindRunStarted, Task: r.task, Config: cfg})
	// What a person types into the page during a takeover is redacted
	// from the journal too (the journal's own redact knows the secrets).
	r.j.AddRedactor(r.s.redactTyped)
	r.s.setActivity(ActivityWorking)
	defer r.s.act.now.Store(ActivityIdle)
	inputs := r.s.inputs.Load()
	task, block := handedOn(r.task, r.o.HandedOn, r.o.HandedOnBytes, r.s.pol.Redact)
	first := taskMessage(task, r.o.StartURL)
	if block != "" {
		first += "\n\n" + block
		r.j.Write(journal.Entry{Event: journal.KindHandedOn, Message: first})
	}
	if r.o.OutputSchema != nil {
		first += "\n\n" + structuredNote
	}
	r.msgs = []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: systemPromptFor(r.s.cfg.Image)},
		{Role: openai.ChatMessageRoleUser, Content: first},
	}

	end := func(st *Step, reason journal.EndReason, answer string, err error) {
		st.Done, st.EndReason, st.Answer = true, reason, answer
		if reason == journal.EndAnswered {
			st.Data = r.data
		}
		st.Total = r.total
		total := r.total
		e := journal.Entry{Event: journal.KindEnded, Step: st.N, EndReason: reason, Answer: answer, Data: st.Data, Steps: st.N,
			Usage: &total, Duration: journal.Duration(time.Since(start))}
		if err != nil {
			e.Error = err.Error()
		}
		if reason == journal.EndFailed {
			st.Failure = r.failure
			e.Error = r.failure
		}
		r.j.Write(e)
		r.j.Sync()
		r.endStep()
		endRunSpan(runSpan, reason, st.N, err)
		yield(st, err)
	}
	// limit ends the run after step st if a limit is reached; it
	// reports whether it did. Every step that goes on ends here: its
	// journal lines go to stable storage first.
	limit := func(st *Step) bool {
		r.j.Sync()
		r.endStep()
		switch {
		case st.N >= r.o.MaxSteps:
			end(st, journal.EndMaxSteps, "", nil)
		case r.total.Total >= r.o.MaxTokens:
			end(st, journal.EndMaxTokens, "", nil)
		case time.Since(start) >= r.o.MaxTime:
			end(st, journal.EndMaxTime, "", nil)
		default:
			return false
		}
		return true
	}
	// why turns a context error into the reason the run ends.
	why := func(err error) (journal.EndReason, error) {
		switch {
		case parent.Err() != nil:
			return journal.EndCancelled, parent.Err()
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
			return journal.EndMaxTime, nil
		}
		return journal.EndError, err
	}

	if r.o.StartURL != "" {
		t0 := time.Now()
		rec := &Step{}
		vctx, done := r.s.observeTool(ctx, "visit_url")
		res, err := r.s.VisitURL(vctx, r.o.StartURL)
		done(nil, err)
		if err != nil && ctx.Err() == nil && !tools.IsToolError(err) && r.lost(err) {
			// The browser went before the run began: relaunch it, and
			// recover opens the start URL again.
			r.lastURL = r.o.StartURL
			if rerr := r.recover(ctx, rec, err); rerr != nil {
				err = rerr
			} else {
				res, err = nil, nil
			}
		}
		r.journalDecisions(0, "visit_url")
		args, _ := json.Marshal(map[string]string{"url": r.o.StartURL})
		e := journal.Entry{Event: journal.KindActed, Tool: "visit_url", Args: args, Duration: journal.Duration(time.Since(t0))}
		switch {
		case err == nil && res == nil: // recovered: the first step observes
			e.Result = rec.Recovered
		case err == nil:
			e.Result = res.Summary
			r.fresh = res.Observation
		case tools.IsToolError(err):
			e.Error = err.Error()
			r.notes = append(r.notes, "opening the start URL failed: "+err.Error())
		default:
			r.j.Write(e)
			reason, rerr := why(err)
			end(&Step{}, reason, "", rerr)
			return
		}
		r.j.Write(e)
	}

	for n := 1; ; n++ {
		ctx := stepProgress(ctx, n) // the step's progress says "step n: ..."
		ctx, r.stepSpan = r.s.tracer().Start(ctx, "surf.step", trace.WithAttributes(attrStep.Int(n)))
		st := &Step{N: n}
		t0 := time.Now()
		if ctx.Err() != nil {
			st.N = n - 1
			reason, err := why(ctx.Err())
			end(st, reason, "", err)
			return
		}

		// A pause for a person (a takeover), between steps.
		if n > 1 && r.o.Between != nil {
			if err := r.between(ctx, n, &inputs); err != nil {
				st.N = n - 1
				reason, rerr := why(err)
				if reason == journal.EndError {
					rerr = fmt.Errorf("between steps: %w", err)
				}
				end(st, reason, "", rerr)
				return
			}
			t0 = time.Now()
		}

		// Observe.
		obs, err := r.observe(ctx, st)
		if err != nil {
			reason, rerr := why(err)
			end(st, reason, "", rerr)
			return
		}
		st.Observation = obs
		r.lastURL = obs.URL
		img, _ := r.j.SaveImage(n, obs.Seq, obs.Image, obs.ImageMIME)
		r.j.Write(journal.Entry{Event: journal.KindObserved, Step: n, URL: obs.URL, Title: obs.Title, Elements: len(obs.Elements), Tokens: obs.Tokens, Image: img, Seq: obs.Seq})
		fp := fingerprint(obs)

		// Reason.
		offered := r.offered(n)
		defs := r.reg.OpenAITools(offered...)
		if r.o.OutputSchema != nil {
			for i := range defs {
				defs[i] = r.o.OutputSchema.StopActionTool(defs[i])
			}
		}
		st.Notes = r.notes
		var imgs []llm.Image
		if len(obs.Image) > 0 {
			imgs = append(imgs, llm.Image{MIME: obs.ImageMIME, Data: obs.Image})
		}
		r.msgs = append(r.msgs, llm.UserMessage(observationMessage(n, obs, r.notes), r.o.ImageDetail, imgs...))
		r.notes = nil
		fitted, err := llm.Fit(r.msgs, r.o.ContextTokens, llm.FitOptions{KeepImages: 1, Tools: defs, ImagePlaceholder: "[the screenshot of this earlier step is omitted]"})
		if err != nil && !errors.Is(err, llm.ErrOverBudget) {
			end(st, journal.EndError, "", err)
			return
		}
		req := openai.ChatCompletionRequest{Model: r.name, Messages: fitted.Messages, Tools: defs}
		if r.o.MaxActionsPerStep == 1 {
			req.ParallelToolCalls = false
		}
		progress(ctx, "asking the model")
		mctx, mcancel := context.WithTimeout(ctx, r.o.ModelTimeout)
		restore := r.s.setActivity(ActivityModel)
		resp, err := r.s.chat(mctx, r.model, req)
		restore()
		mcancel()
		if err != nil {
			if ctx.Err() != nil {
				reason, rerr := why(ctx.Err())
				end(st, reason, "", rerr)
				return
			}
			end(st, journal.EndError, "", fmt.Errorf("asking the model: %w", err))
			return
		}
		st.Usage = journal.Usage{Prompt: resp.Usage.PromptTokens, Completion: resp.Usage.CompletionTokens, Total: resp.Usage.TotalTokens}
		r.addTotal(st.Usage)
		if len(resp.Choices) == 0 {
			r.correct(st, "the model's reply had no choices", correctNoCall)
			r.msgs = append(r.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "(no reply)"})
			st.Duration, st.Total = time.Since(t0), r.total
			if limit(st) || !yield(st, nil) {
				return
			}
			continue
		}
		msg := resp.Choices[0].Message
		msg.Role = openai.ChatMessageRoleAssistant
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", n, i+1)
			}
			if msg.ToolCalls[i].Type == "" {
				msg.ToolCalls[i].Type = openai.ToolTypeFunction
			}
		}
		r.oversized = clipOversized(msg.ToolCalls, r.reg.MaxArgBytes())
		st.Content = strings.TrimSpace(msg.Content)
		for _, tc := range msg.ToolCalls {
			st.Calls = append(st.Calls, journal.Call{ID: tc.ID, Tool: tc.Function.Name, Args: rawArgs(tc.Function.Arguments), Reasoning: reasoningOf(tc.Function.Arguments)})
		}
		r.j.Write(journal.Entry{Event: journal.KindReasoned, Step: n, Calls: st.Calls, Content: st.Content, Usage: &st.Usage})
		r.msgs = append(r.msgs, msg)

		if len(msg.ToolCalls) == 0 {
			if st.Content != "" && r.o.OutputSchema != nil {
				// A structured answer comes only through stop_action.
				r.refuseAnswer(st, "the reply answered in text, without the structured result")
				if r.failure != "" {
					st.Duration = time.Since(t0)
					end(st, journal.EndFailed, "", nil)
					return
				}
				r.correct(st, "the reply answered in text", correctNoData)
				st.Duration, st.Total = time.Since(t0), r.total
				if limit(st) || !yield(st, nil) {
					return
				}
				continue
			}
			if st.Content != "" {
				st.Duration = time.Since(t0)
				end(st, journal.EndAnswered, st.Content, nil)
				return
			}
			r.correct(st, "the reply called no tool", correctNoCall)
			st.Duration, st.Total = time.Since(t0), r.total
			if limit(st) || !yield(st, nil) {
				return
			}
			continue
		}

		// Gate and act.
		r.fresh = nil
		failsBefore := r.answerFails
		var answer string
		done := false
		for i, tc := range msg.ToolCalls {
			if i >= r.o.MaxActionsPerStep {
				r.msgs = append(r.msgs, llm.ToolResult(tc.ID, notRunTooMany))
				continue
			}
			progress(ctx, "%s", describeCall(tc.Function.Name, rawArgs(tc.Function.Arguments)))
			res, stop, err := r.act(ctx, st, tc, offered)
			if err != nil {
				reason, rerr := why(err)
				st.Duration = time.Since(t0)
				end(st, reason, "", rerr)
				return
			}
			r.msgs = append(r.msgs, llm.ToolResult(tc.ID, res))
			if stop != nil {
				answer, done = *stop, true
			}
		}
		if len(msg.ToolCalls) > r.o.MaxActionsPerStep {
			r.correct(st, fmt.Sprintf("the reply made %d tool calls; %d ran", len(msg.ToolCalls), r.o.MaxActionsPerStep), correctTooMany)
		}
		st.Duration = time.Since(t0)
		if done {
			end(st, journal.EndAnswered, answer, nil)
			return
		}
		if r.failure != "" {
			end(st, journal.EndFailed, "", nil)
			return
		}

		// Loops and lack of progress.
		key := fp + "|" + actionKey(msg.ToolCalls)
		if r.fresh != nil && fingerprint(r.fresh) != fp {
			r.repeats = 0
		} else if r.answerFails > failsBefore {
			// a structured answer refused: AnswerTries bounds those
			r.repeats = 0
		} else if key == r.prevKey {
			r.repeats++
		} else {
			r.repeats = 0
		}
		r.prevKey = key
		if fp == r.prevFP {
			r.sameFor++
		} else {
			r.sameFor = 0
		}
		r.prevFP = fp
		if r.repeats+1 >= r.o.StallRepeats {
			if r.warnedLoop {
				end(st, journal.EndStalled, "", nil)
				return
			}
			r.warnedLoop, r.repeats = true, 0
			r.notes = append(r.notes, correctStalled)
			r.j.Write(journal.Entry{Event: journal.KindCorrected, Step: n, Message: "the same action on an unchanged page: " + correctStalled})
		}
		if r.sameFor >= r.o.NoProgressSteps {
			if r.warnedStill && r.sameFor >= r.o.NoProgressSteps*3/2 {
				end(st, journal.EndStalled, "", nil)
				return
			}
			if !r.warnedStill {
				r.warnedStill = true
				r.notes = append(r.notes, correctNoChange)
				r.j.Write(journal.Entry{Event: journal.KindCorrected, Step: n, Message: correctNoChange})
			}
		}
		st.Total = r.total
		if limit(st) || !yield(st, nil) {
			return
		}
	}
}

// between calls RunOptions.Between before step n. After a takeover (a
// note, or input from a person since the last step) the observation the
// last action took is stale: the step observes afresh, after picking up
// the tabs the person opened.
func (r *run) between(ctx context.Context, n int, inputs *int64) error {
	restore := r.s.setActivity(ActivityTakenOver)
	t0 := time.Now()
	note, err := r.o.Between(ctx)
	restore()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := r.s.inputs.Load()
	touched := now != *inputs
	*inputs = now
	note = strings.TrimSpace(note)
	if note == "" && !touched {
		return nil
	}
	r.fresh = nil
	r.s.pickUp(ctx)
	if note != "" {
		note = r.s.pol.Redact(note)
		r.notes = append(r.notes, note)
	}
	r.j.Write(journal.Entry{Event: journal.KindTakenOver, Step: n - 1, Message: note, Duration: journal.Duration(time.Since(t0))})
	return nil
}

// observe takes the step's observation: the one the last action already
// took, or a new one. A lost browser is relaunched first.
func (r *run) observe(ctx context.Context, st *Step) (*Observation, error) {
	if r.fresh != nil {
		o := r.fresh
		r.fresh = nil
		if r.s.alive() {
			return o, nil
		}
	}
	obs, err := r.s.Observe(ctx)
	if err == nil {
		return obs, nil
	}
	if ctx.Err() != nil || !r.lost(err) {
		return nil, err
	}
	if err := r.recover(ctx, st, err); err != nil {
		return nil, err
	}
	return r.s.Observe(ctx)
}

// lost reports whether err means the browser (or the page) is gone.
func (r *run) lost(err error) bool {
	return browserGone(err) || isGone(err) || errors.Is(err, ErrClosed) || r.s.crashed()
}

// recover relaunches the session and reopens the last page.
func (r *run) recover(ctx context.Context, st *Step, cause error) error {
	if r.s.browserConnected() && r.s.pageCrashed() {
		// Only the page crashed: its tab is replaced in the same
		// browser, keeping the session's cookies.
		if err := r.renewTab(ctx, st); err == nil || !browserGone(err) {
			return err
		}
	}
	if r.o.Relaunch == nil {
		return fmt.Errorf("the browser is gone (%v) and the run has no way to relaunch it", cause)
	}
	if err := r.relaunch(ctx); err != nil {
		return fmt.Errorf("relaunching the browser after %v: %w", cause, err)
	}
	msg := fmt.Sprintf("the browser was lost (%s) and relaunched", shortErr(cause))
	if r.lastURL != "" && r.lastURL != "about:blank" {
		if _, err := r.s.VisitURL(ctx, r.lastURL); err == nil {
			msg += "; reopened " + q(r.lastURL, 200)
		} else {
			msg += fmt.Sprintf("; reopening %s failed: %v", q(r.lastURL, 200), err)
		}
		r.s.TakeDecisions()
	}
	st.Recovered = msg
	r.notes = append(r.notes, msg+". The action that was running may not have happened.")
	r.j.Write(journal.Entry{Event: journal.KindRecovered, Step: st.N, Message: msg})
	return nil
}

// act runs one tool call: validated, gated, timed and journaled. It
// returns the text for the model, the answer if the call was stop_action,
// and a runtime error that ends the run.
func (r *run) act(ctx context.Context, st *Step, tc openai.ToolCall, offered []string) (string, *string, error) {
	name := tc.Function.Name
	args := json.RawMessage(tc.Function.Arguments)
	t0 := time.Now()
	cctx, cancel := context.WithTimeout(policy.WithStated(ctx, reasoningOf(tc.Function.Arguments)), r.o.ToolTimeout)
	var res *tools.Result
	var err error
	var data json.RawMessage
	var refused string
	if refusal, ok := r.oversized[tc.ID]; ok {
		res = &tools.Result{Text: refusal, IsError: true} // not run: its arguments were dropped
	} else if n, _ := r.reg.Resolve(name); n == tools.StopAction.Name && r.o.OutputSchema != nil {
		// The data argument is the run's, not the tool's: it is taken
		// out and validated here; the rest goes to stop_action.
		args, data = splitData(args)
		if verr := r.o.OutputSchema.Validate(data); verr != nil {
			refused = verr.Error()
			res = &tools.Result{Text: fmt.Sprintf("stop_action refused: the data does not match the output schema: %s. Call stop_action again with data that matches it (try %d of %d).", verr, r.answerFails+1, r.o.AnswerTries), IsError: true}
		} else {
			res, err = r.reg.Call(cctx, name, args, offered...)
		}
	} else {
		res, err = r.reg.Call(cctx, name, args, offered...)
	}
	toolTimedOut := errors.Is(cctx.Err(), context.DeadlineExceeded)
	cancel()
	resolved, _ := r.reg.Resolve(name)
	if resolved == "" {
		resolved = name
	}
	st.Decisions = append(st.Decisions, r.journalDecisions(st.N, resolved)...)
	dur := time.Since(t0)
	entry := journal.Entry{Event: journal.KindActed, Step: st.N, Tool: resolved, Args: rawArgs(tc.Function.Arguments), Duration: journal.Duration(dur)}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			r.j.Write(entry)
			return "", nil, ctx.Err()
		case toolTimedOut:
			res = &tools.Result{Text: fmt.Sprintf("%s timed out after %s", resolved, r.o.ToolTimeout), IsError: true}
		case errors.Is(err, context.DeadlineExceeded): // a wait inside the tool gave up
			res = &tools.Result{Text: fmt.Sprintf("%s: %s", resolved, shortErr(err)), IsError: true}
		case r.lost(err):
			entry.Error = err.Error()
			r.j.Write(entry)
			if rerr := r.recover(ctx, st, err); rerr != nil {
				return "", nil, rerr
			}
			res = &tools.Result{Text: "During this action " + st.Recovered + "; check whether the action happened.", IsError: true}
			st.Results = append(st.Results, CallResult{Tool: resolved, Text: res.Text, IsError: true, Duration: dur})
			return res.Text, nil, nil
		default:
			entry.Error = err.Error()
			r.j.Write(entry)
			return "", nil, err
		}
	}
	if !res.IsError && len(res.Images) > 0 {
		r.fresh = r.s.Last()
		if r.fresh != nil {
			r.lastURL = r.fresh.URL
		}
	}
	if refused != "" {
		r.refuseAnswer(st, refused)
	}
	text := res.Text
	if !res.IsError {
		// The new observation is the next step's message: the tool result
		// keeps only the summary.
		if i := strings.Index(text, "\n\nobservation "); i >= 0 {
			text = text[:i]
		}
	}
	st.Results = append(st.Results, CallResult{Tool: resolved, Text: text, IsError: res.IsError, Duration: dur})
	if res.IsError {
		entry.Error = text
		if !res.Ran {
			r.j.Write(journal.Entry{Event: journal.KindCorrected, Step: st.N, Tool: resolved, Message: text})
		}
	} else {
		entry.Result = text
	}
	r.j.Write(entry)
	// A structured answer refused is counted by AnswerTries, not by the
	// breaker, which would withhold stop_action itself.
	r.breaker(st, resolved, res.IsError && refused == "")
	if resolved == "stop_action" && !res.IsError {
		var a struct {
			Answer string `json:"answer"`
		}
		_ = json.Unmarshal(res.Args, &a)
		if a.Answer == "" {
			_ = json.Unmarshal(args, &a)
		}
		if r.o.OutputSchema != nil {
			r.data = compactJSON(data)
		}
		return text, &a.Answer, nil
	}
	r.addTotal(r.s.takeUsage())
	return text, nil, nil
}

// refuseAnswer counts a structured answer that did not match the output
// schema; at RunOptions.AnswerTries the run must end failed.
func (r *run) refuseAnswer(st *Step, why string) {
	r.answerFails++
	if r.answerFails >= r.o.AnswerTries {
		r.failure = fmt.Sprintf("the structured answer did not match the output schema after %d tries: %s", r.answerFails, why)
	}
}

// splitData takes the structured answer out of stop_action's arguments.
// Arguments that are not a JSON object are returned as they are, for the
// registry to refuse.
func splitData(args json.RawMessage) (rest, data json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args, nil
	}
	data = m[tools.AnswerDataField]
	if string(bytes.TrimSpace(data)) == "null" {
		data = nil
	}
	delete(m, tools.AnswerDataField)
	rest, err := json.Marshal(m)
	if err != nil {
		return args, data
	}
	return rest, data
}

func compactJSON(b json.RawMessage) json.RawMessage {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return append(json.RawMessage(nil), b...)
	}
	return out.Bytes()
}

// journalDecisions writes the gate's decisions of the last action.
func (r *run) journalDecisions(step int, tool string) []Decided {
	ds := r.s.TakeDecisions()
	for _, d := range ds {
		e := journal.Entry{Event: journal.KindGated, Step: step, Tool: tool, Verdict: d.Verdict.String(), Rule: d.Rule, Reason: d.Reason, Target: d.Target}
		if e.Target == "" {
			e.Target = d.URL
		}
		if d.Asked {
			ok := d.Verdict == policy.Allow
			e.Approved = &ok
		}
		r.j.Write(e)
	}
	return ds
}

// breaker counts a tool's failures in a row and withholds it after too
// many.
func (r *run) breaker(st *Step, tool string, failed bool) {
	if !failed {
		r.fails[tool] = 0
		return
	}
	r.fails[tool]++
	if r.fails[tool] >= r.o.BreakerFailures {
		r.blocked[tool] = st.N + r.o.BreakerCooldown
		r.fails[tool] = 0
		note := fmt.Sprintf("%s failed %d times in a row, so it is unavailable for the next %d steps; try another way.", tool, r.o.BreakerFailures, r.o.BreakerCooldown)
		r.notes = append(r.notes, note)
		r.j.Write(journal.Entry{Event: journal.KindCorrected, Step: st.N, Tool: tool, Message: note})
	}
}

// offered is the tools for this step: those the page offers, less the
// withheld ones.
func (r *run) offered(step int) []string {
	var out []string
	for _, n := range r.s.Offered() {
		if until, ok := r.blocked[n]; ok && step <= until {
			continue
		}
		out = append(out, n)
	}
	return out
}

// correct records a reply surf could not act on and tells the model.
func (r *run) correct(st *Step, what, note string) {
	r.notes = append(r.notes, note)
	st.Notes = append(st.Notes, note)
	r.j.Write(journal.Entry{Event: journal.KindCorrected, Step: st.N, Message: what + ": " + note})
}

// endStep ends the span of the step under way, if any.
func (r *run) endStep() {
	if r.stepSpan != nil {
		r.stepSpan.End()
		r.stepSpan = nil
	}
}

func (r *run) addTotal(u journal.Usage) { r.total.Add(u) }

// fingerprint identifies a page state: where, and what the model saw.
func fingerprint(o *Observation) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00", o.URL, o.Title, int(o.Viewport.ScrollY))
	for _, e := range o.Elements {
		fmt.Fprintf(h, "%s|%s|%s|%s|%s\x00", e.Role, e.Name, e.Value, e.Checked, e.Expanded)
	}
	h.Write([]byte(o.VisibleText))
	return fmt.Sprintf("%x", h.Sum(nil)[:12])
}

// actionKey identifies the actions of a reply, arguments normalized.
func actionKey(calls []openai.ToolCall) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.Function.Name)
		var v map[string]any
		if json.Unmarshal([]byte(c.Function.Arguments), &v) == nil {
			delete(v, "reasoning")
			norm, _ := json.Marshal(v)
			b.Write(norm)
		} else {
			b.WriteString(c.Function.Arguments)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// rawArgs keeps a call's arguments for the journal: as JSON when they are,
// else as a JSON string.
func rawArgs(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func reasoningOf(s string) string {
	var v struct {
		Reasoning string `json:"reasoning"`
	}
	_ = json.Unmarshal([]byte(s), &v)
	return v.Reasoning
}
