package report

import "fmt"

// Describe is the summary in one line for people: "3 steps, 1 denied,
// 2 images (1 missing), 12,345 bytes".
func (s Summary) Describe() string {
	msg := fmt.Sprintf("%d %s", s.Steps, plural(s.Steps, "step", "steps"))
	if s.Denied > 0 {
		msg += fmt.Sprintf(", %d denied", s.Denied)
	}
	if s.Errors > 0 {
		msg += fmt.Sprintf(", %d with errors", s.Errors)
	}
	if s.Recovered > 0 {
		msg += fmt.Sprintf(", %d recovered", s.Recovered)
	}
	msg += fmt.Sprintf(", %d %s", s.Images, plural(s.Images, "image", "images"))
	if s.Missing > 0 {
		msg += fmt.Sprintf(" (%d missing)", s.Missing)
	}
	if !s.Ended {
		msg += ", no end"
	}
	return msg + fmt.Sprintf(", %s bytes", thousands(s.Bytes))
}
