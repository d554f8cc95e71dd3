package websurfer

import (
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/tools"
)

// clippedArgs stands for the arguments of a call that were too large to
// keep.
const clippedArgs = "{}"

// maxClippedName bounds the tool name kept of an oversized call.
const maxClippedName = 64

// clipOversized replaces, in place, the arguments of tool calls larger
// than limit bytes with clippedArgs, before anything else reads them: the
// history sent back to the model, the journal, the token count and the
// loop detector then never hold them. It returns each such call's refusal
// by call ID (nil when there is none): the call does not run, and the
// model is told the limit.
func clipOversized(calls []openai.ToolCall, limit int) map[string]string {
	var out map[string]string
	for i := range calls {
		f := &calls[i].Function
		if len(f.Arguments)+len(f.Name) <= limit {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[calls[i].ID] = tools.TooLarge(f.Name, len(f.Arguments)+len(f.Name), limit)
		f.Arguments = clippedArgs
		if len(f.Name) > maxClippedName {
			f.Name = strings.ToValidUTF8(f.Name[:maxClippedName], "")
		}
	}
	return out
}
