package websurfer

import (
	"context"
	"sort"

	"github.com/surfkit/surf/tools"
)

// Tools returns surf's tools bound to this surfer, for the agent loop, an
// MCP server or any caller that dispatches tool calls by name. Calls are
// validated against each tool's schema before they run; pass Offered() to
// Call so only the tools offered for the current page run.
func (s *Surfer) Tools() *tools.Registry {
	reg, err := tools.NewRegistry(tools.Config{Logger: s.log, Unavailable: s.unavailable, Observe: s.observeTool})
	if err != nil {
		panic(err) // the zero config cannot fail
	}
	act := func(f func(ctx context.Context) (*ActionResult, error)) func(context.Context) (*tools.Result, error) {
		return func(ctx context.Context) (*tools.Result, error) {
			r, err := f(ctx)
			if err != nil {
				return nil, err
			}
			return s.result(r), nil
		}
	}
	noArgs := func(f func(ctx context.Context) (*ActionResult, error)) tools.Handler[tools.NoArgs] {
		h := act(f)
		return func(ctx context.Context, _ tools.NoArgs) (*tools.Result, error) { return h(ctx) }
	}
	reg.Add(
		tools.VisitURL.Bind(func(ctx context.Context, in tools.URLArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.VisitURL(ctx, in.URL) })(ctx)
		}),
		tools.WebSearch.Bind(func(ctx context.Context, in tools.WebSearchArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.WebSearch(ctx, in.Query) })(ctx)
		}),
		tools.HistoryBack.Bind(noArgs(s.HistoryBack)),
		tools.HistoryForward.Bind(noArgs(s.HistoryForward)),
		tools.RefreshPage.Bind(noArgs(s.RefreshPage)),
		tools.PageUp.Bind(noArgs(s.PageUp)),
		tools.PageDown.Bind(noArgs(s.PageDown)),
		tools.ScrollElementUp.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.ScrollElement(ctx, in.TargetID, -1) })(ctx)
		}),
		tools.ScrollElementDown.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.ScrollElement(ctx, in.TargetID, 1) })(ctx)
		}),
		tools.PageLeft.Bind(noArgs(s.PageLeft)),
		tools.PageRight.Bind(noArgs(s.PageRight)),
		tools.ScrollElementLeft.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.ScrollElementSideways(ctx, in.TargetID, -1) })(ctx)
		}),
		tools.ScrollElementRight.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.ScrollElementSideways(ctx, in.TargetID, 1) })(ctx)
		}),
		tools.Click.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.Click(ctx, in.TargetID) })(ctx)
		}),
		tools.InputText.Bind(func(ctx context.Context, in tools.InputTextArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) {
				return s.InputText(ctx, in.InputFieldID, in.TextValue, in.PressEnter, in.DeleteExistingText)
			})(ctx)
		}),
		tools.ClickAt.Bind(func(ctx context.Context, in tools.ClickAtArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.ClickAt(ctx, in.X, in.Y) })(ctx)
		}),
		tools.Drag.Bind(func(ctx context.Context, in tools.DragArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) {
				from, err := pointOf("from", in.From)
				if err != nil {
					return nil, err
				}
				to, err := pointOf("to", in.To)
				if err != nil {
					return nil, err
				}
				return s.Drag(ctx, from, to)
			})(ctx)
		}),
		tools.Hover.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.Hover(ctx, in.TargetID) })(ctx)
		}),
		tools.SelectOption.Bind(func(ctx context.Context, in tools.SelectOptionArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) {
				if in.Options == nil {
					if in.Option == "" {
						return nil, toolErr("select_option needs option (or, for a list that allows several choices, options)")
					}
					return s.SelectOption(ctx, in.TargetID, in.Option)
				}
				named := in.Options
				if in.Option != "" {
					named = append([]string{in.Option}, named...)
				}
				return s.SelectOptions(ctx, in.TargetID, named)
			})(ctx)
		}),
		tools.Keypress.Bind(func(ctx context.Context, in tools.KeypressArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.Keypress(ctx, in.Keys) })(ctx)
		}),
		tools.UploadFile.Bind(func(ctx context.Context, in tools.UploadFileArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.UploadFile(ctx, in.TargetID, in.Path) })(ctx)
		}),
		tools.CreateTab.Bind(func(ctx context.Context, in tools.URLArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.CreateTab(ctx, in.URL) })(ctx)
		}),
		tools.SwitchTab.Bind(func(ctx context.Context, in tools.TabArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.SwitchTab(ctx, in.Index) })(ctx)
		}),
		tools.CloseTab.Bind(func(ctx context.Context, in tools.TabArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.CloseTab(ctx, in.Index) })(ctx)
		}),
		tools.Sleep.Bind(func(ctx context.Context, in tools.SleepArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.Sleep(ctx, in.Seconds) })(ctx)
		}),
		tools.ReadPage.Bind(func(ctx context.Context, in tools.ReadPageArgs) (*tools.Result, error) {
			text, err := s.ReadPage(ctx, in.Page)
			if err != nil {
				return nil, err
			}
			return tools.Text(text), nil
		}),
		tools.SummarizePage.Bind(func(ctx context.Context, _ tools.NoArgs) (*tools.Result, error) {
			text, err := s.SummarizePage(ctx)
			if err != nil {
				return nil, err
			}
			return tools.Text(text), nil
		}),
		tools.AnswerQuestion.Bind(func(ctx context.Context, in tools.QuestionArgs) (*tools.Result, error) {
			text, err := s.AnswerQuestion(ctx, in.Question)
			if err != nil {
				return nil, err
			}
			return tools.Text(text), nil
		}),
		tools.AnswerDialog.Bind(func(ctx context.Context, in tools.AnswerDialogArgs) (*tools.Result, error) {
			return act(func(ctx context.Context) (*ActionResult, error) { return s.AnswerDialog(ctx, in.Accept, in.PromptText) })(ctx)
		}),
		tools.RequestHelp.Bind(func(ctx context.Context, in tools.RequestHelpArgs) (*tools.Result, error) {
			text, err := s.RequestHelp(ctx, in.Reason)
			if err != nil {
				return nil, err
			}
			return tools.Text(text), nil
		}),
		tools.StopAction.Bind(func(ctx context.Context, in tools.StopActionArgs) (*tools.Result, error) {
			return tools.Text(s.StopAction(in.Answer).Summary), nil
		}),
	)
	return reg
}

// result turns an action's result into a tool result: its text and the
// set-of-mark screenshot.
func (s *Surfer) result(r *ActionResult) *tools.Result {
	res := tools.Text(r.Text())
	if o := r.Observation; o != nil && len(o.Image) > 0 {
		res = res.WithImage(o.ImageMIME, o.Image)
	}
	return res
}

// Offered lists the tools that make sense on the page as last observed:
// page_up only when the page can scroll up (page_left and page_right only
// on a page wider than the viewport, scroll_element_left and _right only
// with an element that scrolls sideways), tab tools only with several
// tabs, select_option only with something to choose from, and so on.
// Before the first observation every navigation tool is offered.
func (s *Surfer) Offered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := []string{"visit_url", "web_search", "refresh_page", "keypress", "sleep", "read_page", "create_tab", "stop_action"}
	if s.cfg.Model != nil {
		names = append(names, "summarize_page", "answer_question")
	}
	if s.cfg.Human != nil {
		names = append(names, "request_help")
	}
	if len(s.tabs) > 1 {
		names = append(names, "switch_tab", "close_tab")
	}
	if s.closed || len(s.tabs) == 0 {
		return names
	}
	t := s.tabs[s.active]
	if h := s.pendingDialog(); h != nil && h.t == t {
		names = append(names, "answer_dialog")
	}
	st := &t.state
	st.mu.Lock()
	if st.hist.pos > 0 || t.opener != nil {
		names = append(names, "history_back")
	}
	if st.hist.pos < len(st.hist.urls)-1 {
		names = append(names, "history_forward")
	}
	st.mu.Unlock()
	o := s.last
	if o == nil || o.tab != t {
		return names
	}
	if o.Viewport.MoreAbove {
		names = append(names, "page_up")
	}
	if o.Viewport.MoreBelow {
		names = append(names, "page_down")
	}
	if o.Viewport.MoreLeft {
		names = append(names, "page_left")
	}
	if o.Viewport.MoreRight {
		names = append(names, "page_right")
	}
	var click, input, sel, scroll, sideways, upload bool
	for _, e := range o.Elements {
		click = true
		switch e.Role {
		case "textbox", "searchbox", "combobox", "spinbutton":
			input = true
		}
		if e.Tag == "input" && setValueTypes[e.InputType] {
			input = true // a date, a time, a slider: input_text sets them
		}
		if e.Tag == "select" || e.Role == "combobox" || e.Role == "listbox" || e.Role == "option" {
			sel = true
		}
		if e.Scrollable == "vertical" || e.Scrollable == "both" {
			scroll = true
		}
		if e.ScrollsSideways() {
			sideways = true
		}
		if e.InputType == "file" && s.sess.Info().UploadsDir != "" {
			upload = true
		}
	}
	if click {
		names = append(names, "click", "hover")
	}
	if len(o.frames) > 0 {
		names = append(names, "click_at", "drag")
	}
	if input {
		names = append(names, "input_text")
	}
	if sel {
		names = append(names, "select_option")
	}
	if scroll {
		names = append(names, "scroll_element_up", "scroll_element_down")
	}
	if sideways {
		names = append(names, "scroll_element_left", "scroll_element_right")
	}
	if upload || (click && s.sess.Info().UploadsDir != "") {
		names = append(names, "upload_file")
	}
	sort.Strings(names)
	return names
}

// unavailable says why a tool is not offered now, when there is a reason
// a person would give ("already at the top of the page"); "" leaves the
// refusal to list the tools that are available.
func (s *Surfer) unavailable(tool string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch tool {
	case "summarize_page", "answer_question":
		if s.cfg.Model == nil {
			return "no model is configured to read the page with; read_page returns the page's text"
		}
	case "request_help":
		if s.cfg.Human == nil {
			return noHuman
		}
	case "switch_tab", "close_tab":
		if len(s.tabs) <= 1 {
			return "there is only one tab"
		}
	}
	if s.closed || len(s.tabs) == 0 {
		return ""
	}
	t := s.tabs[s.active]
	o := s.last
	if o == nil || o.tab != t {
		if u := t.page.URL(); u == "" || u == "about:blank" {
			return "no page is open yet: start with visit_url (or web_search)"
		}
		return ""
	}
	switch tool {
	case "page_up":
		return "already at the top of the page"
	case "page_down":
		return "already at the bottom of the page"
	case "history_back":
		return "there is no earlier page in this tab"
	case "history_forward":
		return "there is no later page in this tab"
	case "click", "hover":
		return "nothing on this page can be clicked"
	case "input_text":
		return "this page has no text field"
	case "select_option":
		return "this page has nothing to choose from"
	case "scroll_element_up", "scroll_element_down":
		return "no element on this page scrolls"
	case "upload_file":
		if s.sess.Info().UploadsDir == "" {
			return "uploads are off: no uploads directory was given"
		}
	}
	return ""
}

// pointOf is one end of drag as the model gave it: an id, or x and y.
func pointOf(end string, p tools.PointArgs) (Point, error) {
	switch {
	case p.TargetID != 0 && (p.X != nil || p.Y != nil):
		return Point{}, toolErr("drag's %s takes target_id or x and y, not both", end)
	case p.TargetID != 0:
		return Point{ID: p.TargetID}, nil
	case p.X != nil && p.Y != nil:
		return Point{X: *p.X, Y: *p.Y}, nil
	}
	return Point{}, toolErr("drag's %s needs target_id, or x and y", end)
}
