package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/tools"
)

// Board tools. With Config.Board set, orchestrators put web tasks on surf's
// task board (board_add, with dependencies between them), follow them
// (board_status, board_wait with MCP progress notifications as they
// change state) and read what they produced (board_result); board_cancel
// stops one. Workers (surf work, or a program's board.Work) run the
// tasks; the server only talks to the board, and opens no browser context
// for these tools. Results are JSON, as text and as structured content
// (data.go).

// The board tools' names.
const (
	BoardAddTool    = "board_add"
	BoardStatusTool = "board_status"
	BoardWaitTool   = "board_wait"
	BoardResultTool = "board_result"
	BoardCancelTool = "board_cancel"
)

// Bounds of the board tools.
const (
	// DefaultBoardWait is board_wait's timeout when the call gives none.
	DefaultBoardWait = 10 * time.Minute
	// MaxBoardWait is the longest timeout board_wait accepts.
	MaxBoardWait = time.Hour
	// maxBoardList bounds the records board_status returns.
	maxBoardList = 200
	// maxLabels bounds a task's labels, and maxLabelLen each key and value.
	maxLabels   = 32
	maxLabelLen = 256
	// answerCut bounds an answer in board_status and board_wait; board_result
	// gives it whole.
	answerCut = 2000
)

// The board tools' inputs.
type (
	// BoardTaskArgs is one task of board_add. Its labels (an object of
	// strings) are read apart from the other fields: see boardLabels.
	BoardTaskArgs struct {
		ID              string   `json:"id,omitempty" jsonschema:"The task's id: letters, digits, '-' and '_'. Other tasks of the batch name it in after. Default: a generated id (returned)." schema:"maxLength=64"`
		Instruction     string   `json:"instruction" jsonschema:"The task for a web surfer, in plain words: what to find or do, and what to answer. The answers of the tasks in after are given to it as quoted data; it may also quote one where needed: {{ID.answer}}, {{ID.result}} or {{ID.result.KEY}} for an ID in after." schema:"minLength=1,maxLength=16000"`
		StartURL        string   `json:"start_url,omitempty" jsonschema:"A page to open before the first step (http or https)." schema:"maxLength=8192"`
		After           []string `json:"after,omitempty" jsonschema:"Ids of tasks (of this batch or already on the board) that must be done before this one starts." schema:"maxItems=64,items.maxLength=64"`
		Allow           []string `json:"allow,omitempty" jsonschema:"Host patterns (example.com, *.example.com) this task alone may reach: it narrows the workers' browsing policy, never widens it." schema:"maxItems=64,items.maxLength=253"`
		Deny            []string `json:"deny,omitempty" jsonschema:"Host patterns this task may not reach, besides what the workers' policy denies." schema:"maxItems=64,items.maxLength=253"`
		RunAfterFailure bool     `json:"run_after_failure,omitempty" jsonschema:"Run once the tasks in after have ended even if one failed or was cancelled. Default: a failed dependency fails this task with its reason."`
		MaxSteps        int      `json:"max_steps,omitempty" jsonschema:"The most steps (model calls) the surfer may take; default: the worker's." schema:"minimum=1,maximum=100"`
		MaxTime         string   `json:"max_time,omitempty" jsonschema:"The longest the run may take, as a duration (\"5m\", \"90s\"); default: the worker's." schema:"maxLength=32"`
	}
	// BoardAddArgs is the input of board_add.
	BoardAddArgs struct {
		Tasks []BoardTaskArgs `json:"tasks" jsonschema:"The tasks to add, as one batch: all are added, or none (a malformed task, a taken id, an unknown dependency or a cycle refuses the batch)." schema:"minItems=1,maxItems=100"`
	}
	// BoardStatusArgs is the input of board_status.
	BoardStatusArgs struct {
		IDs   []string `json:"ids,omitempty" jsonschema:"The tasks to report; default: every task on the board (the newest 200)." schema:"maxItems=200,items.maxLength=64"`
		State string   `json:"state,omitempty" jsonschema:"Only tasks in this state." schema:"enum=pending|ready|running|done|failed|cancelled"`
	}
	// BoardWaitArgs is the input of board_wait.
	BoardWaitArgs struct {
		IDs     []string `json:"ids" jsonschema:"The tasks to wait for." schema:"minItems=1,maxItems=200,items.maxLength=64"`
		Timeout string   `json:"timeout,omitempty" jsonschema:"The longest to wait, as a duration (\"10m\", at most \"1h\"); default 10m. On timeout the result is an error listing the tasks still open; wait again to go on." schema:"maxLength=32"`
	}
	// BoardIDArgs is the input of board_result.
	BoardIDArgs struct {
		ID string `json:"id" jsonschema:"The task's id." schema:"minLength=1,maxLength=64"`
	}
	// BoardCancelArgs is the input of board_cancel.
	BoardCancelArgs struct {
		ID     string `json:"id" jsonschema:"The task to cancel." schema:"minLength=1,maxLength=64"`
		Reason string `json:"reason,omitempty" jsonschema:"Why, for the record; default \"cancelled by a user\"." schema:"maxLength=500"`
	}
)

// BoardTask is a task in the board tools' results.
type BoardTask struct {
	ID       string   `json:"id"`
	State    string   `json:"state"`
	After    []string `json:"after,omitempty"`
	Worker   string   `json:"worker,omitempty"`
	Attempts int      `json:"attempts"`
	Progress string   `json:"progress,omitempty"`
	Answer   string   `json:"answer,omitempty"`
	Reason   string   `json:"reason,omitempty"`
}

// BoardRecord is board_result's result: a task's whole record.
type BoardRecord struct {
	BoardTask
	Instruction string            `json:"instruction"`
	StartURL    string            `json:"start_url,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Notes       []string          `json:"notes,omitempty"`
	Created     time.Time         `json:"created"`
	Started     time.Time         `json:"started,omitzero"`
	Finished    time.Time         `json:"finished,omitzero"`
	// Data is the structured result, validated against the task's
	// output schema.
	Data      json.RawMessage `json:"data,omitempty"`
	EndReason string          `json:"end_reason,omitempty"`
	Steps     int             `json:"steps,omitempty"`
	Tokens    int             `json:"tokens,omitempty"`
	Duration  string          `json:"duration,omitempty"`
	// Journal, Images and Report name files in the board's file store
	// (surf board show, surf board report read them).
	Journal string   `json:"journal,omitempty"`
	Images  []string `json:"images,omitempty"`
	Report  string   `json:"report,omitempty"`
	// Downloads are what the run downloaded and Attachments the files
	// added with the task: board_file reads them.
	Downloads   []board.File `json:"downloads,omitempty"`
	Attachments []board.File `json:"attachments,omitempty"`
}

func brief(r board.Record, cut int) BoardTask {
	t := BoardTask{ID: r.Task.ID, State: string(r.State), After: r.Task.After, Worker: r.Worker, Attempts: r.Attempts, Reason: r.Reason}
	if !r.State.Terminal() {
		t.Progress = r.Progress
	}
	if r.Result != nil {
		t.Answer = r.Result.Answer
		if cut > 0 && len(t.Answer) > cut {
			t.Answer = textcut.Bytes(t.Answer, cut) + " (cut; board_result has it whole)"
		}
	}
	return t
}

func full(r board.Record) BoardRecord {
	out := BoardRecord{
		BoardTask:   brief(r, 0),
		Instruction: r.Task.Instruction,
		StartURL:    r.Task.StartURL,
		Labels:      r.Task.Labels,
		Notes:       r.Notes,
		Created:     r.Created,
		Started:     r.Started,
		Finished:    r.Finished,
		Attachments: r.Task.Attachments,
	}
	if res := r.Result; res != nil {
		out.EndReason, out.Steps, out.Tokens, out.Data = res.EndReason, res.Steps, res.Tokens, res.Data
		if res.Duration > 0 {
			out.Duration = time.Duration(res.Duration).Round(time.Millisecond).String()
		}
		out.Journal, out.Images, out.Report = res.Journal, res.Images, res.Report
		out.Downloads = res.Downloads
	}
	return out
}

// jsonResult is v as a result's text, and as its data (structured
// content).
func jsonResult(v any) (*tools.Result, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	res := tools.Text(string(b))
	res.Data = v
	return res, nil
}

// boardError makes an error of the board a tool error: the caller can
// correct the call (an unknown id, a cycle, a task already ended), except
// when the call's context ended.
func boardError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return tools.Errorf("%s: %v", what, err)
}

// boardTools is the registry of the board tools.
func (s *Server) boardTools() *tools.Registry {
	reg, err := tools.NewRegistry(tools.Config{})
	if err != nil {
		panic(err) // the zero config cannot fail
	}
	reg.Add(
		tools.New(BoardAddTool, "Put web tasks on surf's task board as one batch, with dependencies: a task runs once every task in its after list is done, and tasks without a path between them run in parallel on surf's workers. "+
			"Returns each task's id and state (pending until its dependencies are done, then ready). A cycle or an unknown dependency refuses the whole batch. A task sees the answers (and structured results) of the tasks it runs after; with an output_schema its result carries JSON data validated against it. Follow them with board_wait or board_status, read them with board_result.",
			s.boardAdd),
		tools.New(BoardStatusTool, "List tasks on surf's task board (all, those named, or those in one state): id, state, worker, attempts, what the worker is doing now, and the answer or the reason it failed.",
			s.boardStatus),
		tools.New(BoardWaitTool, "Wait until the named tasks on surf's task board have ended (done, failed or cancelled), sending a progress notification as each changes state when the call has a progress token. Returns each task's state and answer; on timeout, an error result listing those still open.",
			s.boardWait),
		tools.New(BoardResultTool, "The whole record of a task on surf's task board: state, answer, how the run ended, steps, model tokens, attempts, the reason it failed, the names of its journal, images and report in the board's file store, and the files its run downloaded and those attached to it (board_file reads them).",
			s.boardResult),
		tools.New(BoardFileTool, "Read a file of a task on surf's task board: one its run downloaded, or one attached to it, by the name board_result lists. Returns its description in JSON (size, SHA-256, media type) and the file as an embedded resource: text for text, else a base64 blob; at most 8 MiB.",
			s.boardFile),
		tools.New(BoardCancelTool, "Cancel a task on surf's task board that has not ended: a pending or ready task never runs, a running one is stopped. Tasks that run after it fail, unless they run after failures.",
			s.boardCancel),
	)
	reg.Add(s.planTools()...) // board_plan.go
	return reg
}

// PrincipalLabel is the label of a task added through the board tools by
// a client with a principal (HTTPOptions.Principals): the principal's
// name. Clients cannot set it themselves.
const PrincipalLabel = "surf.principal"

// principalKey carries the calling client's principal to a board tool's
// handler.
type boardPrincipalKey struct{}

func boardPrincipal(ctx context.Context) string {
	p, _ := ctx.Value(boardPrincipalKey{}).(string)
	return p
}

// owns reports whether a task is the principal's: added by it, or for the
// unnamed principal, added by no principal.
func owns(principal string, r board.Record) bool {
	return r.Task.Labels[PrincipalLabel] == principal
}

// boardGet reads a task of the caller's principal: another principal's
// task is no task.
func (s *Server) boardGet(ctx context.Context, id string) (board.Record, error) {
	r, err := s.cfg.Board.Get(ctx, id)
	if err != nil {
		return r, err
	}
	if !owns(boardPrincipal(ctx), r) {
		return board.Record{}, fmt.Errorf("%w: %s", board.ErrNotFound, id)
	}
	return r, nil
}

func (s *Server) boardAdd(ctx context.Context, in BoardAddArgs) (*tools.Result, error) {
	labels, _ := ctx.Value(labelsKey{}).([]map[string]string)
	schemas, _ := ctx.Value(schemaKey{}).([]json.RawMessage)
	principal := boardPrincipal(ctx)
	batch := map[string]bool{}
	for _, a := range in.Tasks {
		batch[a.ID] = a.ID != ""
	}
	tasks := make([]board.Task, len(in.Tasks))
	for i, a := range in.Tasks {
		t := board.Task{ID: a.ID, Instruction: a.Instruction, StartURL: a.StartURL, After: a.After, RunAfterFailure: a.RunAfterFailure, MaxSteps: a.MaxSteps}
		if i < len(labels) {
			t.Labels = labels[i]
		}
		if i < len(schemas) {
			t.OutputSchema = schemas[i] // board.Add checks it
		}
		if principal != "" {
			t.Labels = maps.Clone(t.Labels)
			if t.Labels == nil {
				t.Labels = map[string]string{}
			}
			t.Labels[PrincipalLabel] = principal
		}
		name := fmt.Sprintf("task %d", i+1)
		if a.ID != "" {
			name += " (" + a.ID + ")"
		}
		for _, d := range a.After {
			if batch[d] {
				continue
			}
			// A dependency outside the batch must be the caller's too.
			if _, err := s.boardGet(ctx, d); err != nil && errors.Is(err, board.ErrNotFound) {
				return nil, tools.Errorf("%s: after: %v", name, err)
			}
		}
		if a.MaxTime != "" {
			d, err := time.ParseDuration(a.MaxTime)
			if err != nil || d <= 0 {
				return nil, tools.Errorf("%s: max_time %q is not a positive duration like \"5m\"", name, a.MaxTime)
			}
			t.MaxTime = board.Duration(d)
		}
		if len(a.Allow)+len(a.Deny) > 0 {
			t.Policy = &board.Policy{}
			for _, h := range a.Allow {
				hr, err := policy.ParseHostRule(h)
				if err != nil {
					return nil, tools.Errorf("%s: allow %q: %v", name, h, err)
				}
				t.Policy.Allow = append(t.Policy.Allow, hr)
			}
			for _, h := range a.Deny {
				hr, err := policy.ParseHostRule(h)
				if err != nil {
					return nil, tools.Errorf("%s: deny %q: %v", name, h, err)
				}
				t.Policy.Deny = append(t.Policy.Deny, hr)
			}
		}
		tasks[i] = t
	}
	recs, err := s.cfg.Board.Add(ctx, tasks...)
	if err != nil {
		return nil, boardError(ctx, "the batch was not added", err)
	}
	out := BoardTasks{Tasks: []BoardTask{}}
	for _, r := range recs {
		out.Tasks = append(out.Tasks, brief(r, answerCut))
	}
	return jsonResult(out)
}

func (s *Server) boardStatus(ctx context.Context, in BoardStatusArgs) (*tools.Result, error) {
	var recs []board.Record
	if len(in.IDs) > 0 {
		for _, id := range in.IDs {
			r, err := s.boardGet(ctx, id)
			if err != nil {
				return nil, boardError(ctx, "reading the board", err)
			}
			recs = append(recs, r)
		}
	} else {
		all, err := s.cfg.Board.List(ctx)
		if err != nil {
			return nil, boardError(ctx, "reading the board", err)
		}
		principal := boardPrincipal(ctx)
		recs = slices.DeleteFunc(all, func(r board.Record) bool { return !owns(principal, r) })
	}
	if in.State != "" {
		recs = slices.DeleteFunc(recs, func(r board.Record) bool { return string(r.State) != in.State })
	}
	out := BoardStatus{Tasks: []BoardTask{}}
	if n := len(recs); n > maxBoardList {
		out.More = n - maxBoardList
		recs = recs[n-maxBoardList:] // the newest
	}
	for _, r := range recs {
		out.Tasks = append(out.Tasks, brief(r, answerCut))
	}
	return jsonResult(out)
}

func (s *Server) boardWait(ctx context.Context, in BoardWaitArgs) (*tools.Result, error) {
	timeout := DefaultBoardWait
	if in.Timeout != "" {
		d, err := time.ParseDuration(in.Timeout)
		if err != nil || d <= 0 || d > MaxBoardWait {
			return nil, tools.Errorf("timeout %q must be a positive duration of at most %s, like \"10m\"", in.Timeout, MaxBoardWait)
		}
		timeout = d
	}
	ids := in.IDs
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return nil, tools.Errorf("ids names %s twice", id)
		}
		seen[id] = true
	}
	for _, id := range ids {
		if _, err := s.boardGet(ctx, id); err != nil {
			return nil, boardError(ctx, "nothing to wait for", err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	notify, _ := ctx.Value(notifyKey{}).(func(string))
	got := map[string]board.Record{}
	ended := func() int {
		n := 0
		for _, id := range ids {
			if r, ok := got[id]; ok && r.State.Terminal() {
				n++
			}
		}
		return n
	}
	var werr error
	for ev, err := range s.cfg.Board.Watch(wctx, ids...) {
		if err != nil {
			werr = err
			break
		}
		r := ev.Record
		prev, seen := got[r.Task.ID]
		got[r.Task.ID] = r
		if notify != nil && (!seen || prev.State != r.State) && (!ev.Initial || r.State.Terminal()) {
			msg := fmt.Sprintf("%d of %d ended: %s %s", ended(), len(ids), r.Task.ID, r.State)
			switch {
			case r.State == board.Running && r.Worker != "":
				msg = fmt.Sprintf("%d of %d ended; %s running on %s", ended(), len(ids), r.Task.ID, r.Worker)
			case !r.State.Terminal():
				msg = fmt.Sprintf("%d of %d ended; %s %s", ended(), len(ids), r.Task.ID, r.State)
			case r.Reason != "":
				msg += ": " + textcut.Line(r.Reason, 200)
			}
			notify(msg)
		}
		if ended() == len(ids) {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the call was cancelled: no result is read
	}
	out := BoardWaited{Tasks: []BoardTask{}}
	for _, id := range ids {
		r, ok := got[id]
		if !ok {
			out.Tasks = append(out.Tasks, BoardTask{ID: id, State: "unknown"})
			out.Open = append(out.Open, id)
			continue
		}
		out.Tasks = append(out.Tasks, brief(r, answerCut))
		if !r.State.Terminal() {
			out.Open = append(out.Open, fmt.Sprintf("%s (%s)", id, r.State))
		}
	}
	res, err := jsonResult(out)
	if err != nil {
		return nil, err
	}
	switch {
	case len(out.Open) == 0:
		return res, nil
	case werr != nil:
		return res, tools.Errorf("watching the board: %v; %d of %d tasks still open: %s", werr, len(out.Open), len(ids), strings.Join(out.Open, ", "))
	}
	return res, tools.Errorf("timed out after %s with %d of %d tasks still open: %s; call board_wait again to wait longer", timeout, len(out.Open), len(ids), strings.Join(out.Open, ", "))
}

func (s *Server) boardResult(ctx context.Context, in BoardIDArgs) (*tools.Result, error) {
	r, err := s.boardGet(ctx, in.ID)
	if err != nil {
		return nil, boardError(ctx, "reading the board", err)
	}
	return jsonResult(full(r))
}

func (s *Server) boardCancel(ctx context.Context, in BoardCancelArgs) (*tools.Result, error) {
	if _, err := s.boardGet(ctx, in.ID); err != nil {
		return nil, boardError(ctx, "not cancelled", err)
	}
	r, err := s.cfg.Board.Cancel(ctx, in.ID, strings.TrimSpace(in.Reason))
	if err != nil {
		return nil, boardError(ctx, "not cancelled", err)
	}
	return jsonResult(brief(r, answerCut))
}

// labelsKey carries board_add's labels, one map per task, to its handler.
type labelsKey struct{}

// notifyKey carries a call's progress notifier (func(string)) to its
// handler.
type notifyKey struct{}

// boardLabels takes the labels out of board_add's tasks, which the
// registry's schemas cannot express (an object of strings), and checks
// them. The other arguments go through the registry as usual.
func boardLabels(args json.RawMessage) ([]map[string]string, json.RawMessage, error) {
	return takeTaskField(args, "labels", func(i int, raw json.RawMessage) (map[string]string, error) {
		var l map[string]string
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("task %d: labels must be an object of strings", i+1)
		}
		if len(l) > maxLabels {
			return nil, fmt.Errorf("task %d: %d labels; at most %d", i+1, len(l), maxLabels)
		}
		for k, v := range l {
			if k == PrincipalLabel {
				return nil, fmt.Errorf("task %d: the label %s is surf's own: it names the principal that added the task", i+1, PrincipalLabel)
			}
			if k == "" || utf8.RuneCountInString(k) > maxLabelLen || utf8.RuneCountInString(v) > maxLabelLen {
				return nil, fmt.Errorf("task %d: label keys must be 1 to %d characters and values at most %d", i+1, maxLabelLen, maxLabelLen)
			}
		}
		return l, nil
	})
}

// takeTaskField takes field out of each of board_add's tasks in args and
// reads it with read (given the task's index; a null or missing field is
// the zero value). It returns the values and the arguments without the
// field. Arguments that are not board_add's shape come back as they are:
// the registry says what is wrong with them.
func takeTaskField[T any](args json.RawMessage, field string, read func(int, json.RawMessage) (T, error)) ([]T, json.RawMessage, error) {
	if !bytes.Contains(args, []byte(`"`+field+`"`)) {
		return nil, args, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil, args, nil
	}
	var tasks []map[string]json.RawMessage
	if json.Unmarshal(m["tasks"], &tasks) != nil {
		return nil, args, nil
	}
	vals := make([]T, len(tasks))
	for i, t := range tasks {
		raw, ok := t[field]
		if !ok {
			continue
		}
		delete(t, field)
		if string(raw) == "null" {
			continue
		}
		v, err := read(i, raw)
		if err != nil {
			return nil, nil, err
		}
		vals[i] = v
	}
	b, err := json.Marshal(tasks)
	if err != nil {
		return nil, nil, err
	}
	m["tasks"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	return vals, out, nil
}

// boardSchema adds the labels of board_add's tasks to its listed schema.
func boardSchema(s *jsonschema.Schema) *jsonschema.Schema {
	tasks := s.Properties["tasks"]
	if tasks == nil || tasks.Items == nil {
		return s
	}
	item := tasks.Items
	props := make(map[string]*jsonschema.Schema, len(item.Properties)+1)
	for k, v := range item.Properties {
		props[k] = v
	}
	props["labels"] = &jsonschema.Schema{
		Type:                 "object",
		Description:          "Free-form labels (string values) for the people and programs that read the board.",
		AdditionalProperties: &jsonschema.Schema{Type: "string", MaxLength: jsonschema.Ptr(maxLabelLen)},
		MaxProperties:        jsonschema.Ptr(maxLabels),
	}
	props[outputSchemaField] = outputSchemaProp()
	item.Properties = props
	item.PropertyOrder = append(item.PropertyOrder, "labels", outputSchemaField)
	return s
}

// boardOutputSchemas takes the output schemas out of board_add's tasks,
// as boardLabels does the labels; board.Add checks them.
func boardOutputSchemas(args json.RawMessage) ([]json.RawMessage, json.RawMessage, error) {
	return takeTaskField(args, outputSchemaField, func(i int, raw json.RawMessage) (json.RawMessage, error) {
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("task %d: %s must be a JSON Schema object", i+1, outputSchemaField)
		}
		return raw, nil
	})
}

func boardAnnotations(name string) *mcp.ToolAnnotations {
	closed := false
	readOnly := name == BoardStatusTool || name == BoardWaitTool || name == BoardResultTool || name == BoardFileTool
	a := &mcp.ToolAnnotations{OpenWorldHint: &closed, ReadOnlyHint: readOnly}
	if !readOnly {
		destructive := name == BoardCancelTool
		a.DestructiveHint = &destructive
	}
	return a
}

// boardHandler is the MCP handler of a board tool. The call ends with its
// client; board_wait bounds itself (its timeout), the others end after
// the call timeout.
func (s *Server) boardHandler(name string) mcp.ToolHandler {
	return s.guarded(name, "", func(ctx context.Context, req *mcp.CallToolRequest, cl *client, args json.RawMessage) *mcp.CallToolResult {
		limit := s.cfg.CallTimeout
		if name == BoardWaitTool || name == BoardPlanTool {
			limit = MaxBoardWait + time.Minute
		}
		tctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		go func() {
			select {
			case <-cl.quit.c:
				cancel()
			case <-tctx.Done():
			}
		}()
		cctx := context.WithValue(tctx, boardPrincipalKey{}, cl.principal)
		if name == BoardAddTool {
			labels, rest, err := boardLabels(args)
			if err != nil {
				return errorResult(fmt.Sprintf("invalid arguments for %s: %v", name, err))
			}
			schemas, rest, err := boardOutputSchemas(rest)
			if err != nil {
				return errorResult(fmt.Sprintf("invalid arguments for %s: %v", name, err))
			}
			args = rest
			cctx = context.WithValue(cctx, labelsKey{}, labels)
			cctx = context.WithValue(cctx, schemaKey{}, schemas)
		}
		if notify := s.notifier(cctx, req); notify != nil {
			cctx = context.WithValue(cctx, notifyKey{}, notify)
		}
		file := &boardFileOut{}
		cctx = context.WithValue(cctx, fileOutKey{}, file)
		out, err := s.boards.Call(cctx, name, args, s.boards.Names()...)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return errorResult(fmt.Sprintf("%s did not finish in %s", name, limit))
			}
			return errorResult(fmt.Sprintf("%s failed: %v", name, err))
		}
		return withFile(tools.MCPResult(out), file)
	})
}

// notifier sends MCP progress notifications for a call whose client gave
// a progress token; nil without one. Progress counts the notifications.
func (s *Server) notifier(ctx context.Context, req *mcp.CallToolRequest) func(string) {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	var mu sync.Mutex
	n := 0
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
		if err != nil {
			s.log.Debug("sending progress", "err", err)
		}
	}
}

// boardInstructions are added to the server's instructions when it has a
// board.
const boardInstructions = `
The board_* tools put web tasks on surf's task board for its workers to run in parallel: board_add a batch (with after lists for dependencies), board_wait for them (progress notifications as they change state), board_result for each answer, board_file for the files a task downloaded or was given, board_status to look, board_cancel to stop one.`
