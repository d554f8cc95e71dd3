package websurfer

import "context"

// askPage is implemented with the agent loop's model plumbing.
func (s *Surfer) askPage(ctx context.Context, question string) (string, error) {
	return "", toolErr("%v", errNoModel)
}
