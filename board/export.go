package board

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
)

// Row is one task of an export: its id, state, answer (or why it has
// none), structured result and labels.
type Row struct {
	ID     string            `json:"id"`
	State  State             `json:"state"`
	Answer string            `json:"answer,omitempty"`
	Reason string            `json:"reason,omitempty"`
	Data   json.RawMessage   `json:"data,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Rows turns records into export rows, in their order.
func Rows(recs []Record) []Row {
	out := make([]Row, 0, len(recs))
	for _, r := range recs {
		row := Row{ID: r.Task.ID, State: r.State, Reason: r.Reason, Labels: r.Task.Labels}
		if r.Result != nil {
			row.Answer, row.Data = r.Result.Answer, r.Result.Data
		}
		out = append(out, row)
	}
	return out
}

// ExportJSONL writes one JSON object a line per record (see Row).
func ExportJSONL(w io.Writer, recs []Record) error {
	enc := json.NewEncoder(w)
	for _, row := range Rows(recs) {
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	return nil
}

// ExportCSV writes a header and one row per record. The columns are id,
// state, answer and reason, then one column per top-level key of the
// structured results (an object), named data.KEY, in key order: a string
// value as it is, any other value as JSON, empty when the row has no such
// key. A structured result that is not an object goes whole, as JSON, in
// a column named data. Cells are written as they are: a spreadsheet that
// reads this file may take a cell starting with = as a formula.
func ExportCSV(w io.Writer, recs []Record) error {
	rows := Rows(recs)
	objs := make([]map[string]json.RawMessage, len(rows))
	var keys []string
	whole := false
	for i, row := range rows {
		if len(row.Data) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(row.Data, &m) != nil || m == nil {
			whole = true
			continue
		}
		objs[i] = m
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	cw := csv.NewWriter(w)
	head := []string{"id", "state", "answer", "reason"}
	if whole {
		head = append(head, "data")
	}
	for _, k := range keys {
		head = append(head, "data."+k)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for i, row := range rows {
		line := []string{row.ID, string(row.State), row.Answer, row.Reason}
		if whole {
			cell := ""
			if objs[i] == nil && len(row.Data) > 0 {
				cell = string(row.Data)
			}
			line = append(line, cell)
		}
		for _, k := range keys {
			line = append(line, cellOf(objs[i][k]))
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// cellOf is a JSON value as a CSV cell: a string unquoted, the rest as
// compact JSON, nothing as empty.
func cellOf(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	b, _ := json.Marshal(x)
	return string(b)
}
