// Package journal records what one run of surf's agent loop did, as JSON
// lines with set-of-mark images beside them, and reads such a record back.
package journal
