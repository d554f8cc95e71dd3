package websurfer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/surfkit/surf/som"
)

// On a dense page the text lists as many on-screen elements as its token
// budget allows, and the set-of-mark image numbers exactly those: a number
// in the image is always one the text explains. A tag goes next to its
// box, or a little way off when the spots next to it are taken, but never
// far: one that finds no room within maxDetachCSS is left out (its outline
// is drawn) and the text says which ids have no number in the image.

// maxDetachCSS bounds, in CSS pixels, how far a tag may sit from its box:
// about three tag heights.
const maxDetachCSS = 48

// maxDetach is maxDetachCSS in image pixels for opts' scale, unless the
// surfer's options set their own bound.
func maxDetach(opts som.Options) int {
	if opts.MaxDetach != 0 {
		return opts.MaxDetach
	}
	scale := opts.Scale
	if scale <= 0 {
		scale = 1
	}
	return max(1, int(maxDetachCSS*scale+0.5))
}

// droppedIDs lists the ids of labels whose tag was left out.
func droppedIDs(labels []som.Label) []int {
	var out []int
	for _, l := range labels {
		if l.Place == som.Dropped {
			out = append(out, l.ID)
		}
	}
	return out
}

// noteDropped says in the observation which listed elements have an
// outline but no number in the image, before the element list.
func (s *Surfer) noteDropped(obs *Observation, ids []int) {
	if len(ids) == 0 {
		return
	}
	parts := make([]string, 0, 8)
	for _, id := range ids[:min(len(ids), 8)] {
		parts = append(parts, strconv.Itoa(id))
	}
	list := strings.Join(parts, ", ")
	if len(ids) > 8 {
		list += fmt.Sprintf(" and %d more", len(ids)-8)
	}
	note := "no room near their boxes for the numbers of ids " + list + " in the screenshot (outlined only)"
	line := "note: " + note + "\n"
	text := obs.text
	if i := strings.Index(text, "\nelements on screen ("); i >= 0 {
		text = text[:i+1] + line + text[i+1:]
	} else {
		text += line
	}
	if tokensOf(text) > s.cfg.TokenBudget {
		return // no room to say so; the outlines still show
	}
	obs.text = text
	obs.Tokens = tokensOf(text)
	obs.Notes = append(obs.Notes, note)
}
