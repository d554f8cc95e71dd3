package sandbox

// DetachState makes the session forget its state file: Close then leaves
// the file as it is. Call it before Close, not concurrently with it or
// with SaveState (an MCP client's session_close with save false).
func (s *Session) DetachState() { s.state = StateFile{} }
