package sandbox

import "path/filepath"

// BrowserDownloadsDir is the directory a local browser writes downloads
// into while they run (Playwright names each by its guid, with
// ".crdownload" until it is complete), for watching their size. It is
// empty for a remote browser, whose disk is not this machine's.
func (s *Session) BrowserDownloadsDir() string {
	if s.sb.info.Remote != "" || s.sb.tmp == "" {
		return ""
	}
	return filepath.Join(s.sb.tmp, "artifacts")
}
