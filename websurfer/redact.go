package websurfer

// redactObservation puts placeholders for the policy's secrets and the
// text a person typed into the session (in any
// encoding Redact knows) in every string an observation hands out: the
// page's URL after a form submitted a secret holds it form-encoded, a
// title or a tab may echo it. The text and element values are redacted as
// they are built.
func (s *Surfer) redactObservation(o *Observation) {
	if o == nil || !s.pol.Redacts() { // secrets, or text a person typed (Input)
		return
	}
	r := s.pol.Redact
	o.URL, o.Title, o.VisibleText = r(o.URL), r(o.Title), r(o.VisibleText)
	for i := range o.Elements {
		e := &o.Elements[i]
		e.Name, e.Value, e.Placeholder, e.Href, e.Frame, e.CoveredBy = r(e.Name), r(e.Value), r(e.Placeholder), r(e.Href), r(e.Frame), r(e.CoveredBy)
		for k := range e.Options {
			e.Options[k] = r(e.Options[k])
		}
		for k := range e.SelectedOptions {
			e.SelectedOptions[k] = r(e.SelectedOptions[k])
		}
	}
	if m := o.Metadata; m != nil {
		m.Description = r(m.Description)
		for k, v := range m.OpenGraph {
			m.OpenGraph[k] = r(v)
		}
		for k := range m.JSONLD {
			m.JSONLD[k] = r(m.JSONLD[k])
		}
	}
	for i := range o.Tabs {
		o.Tabs[i].Title, o.Tabs[i].URL = r(o.Tabs[i].Title), r(o.Tabs[i].URL)
	}
	for i := range o.Events {
		o.Events[i].Message, o.Events[i].URL = r(o.Events[i].Message), r(o.Events[i].URL)
	}
	for i := range o.Notes {
		o.Notes[i] = r(o.Notes[i])
	}
	for i := range o.Blocked.Navigations {
		o.Blocked.Navigations[i] = r(o.Blocked.Navigations[i])
	}
	for i := range o.Blocked.UnrecordedURLs {
		o.Blocked.UnrecordedURLs[i] = r(o.Blocked.UnrecordedURLs[i])
	}
}
