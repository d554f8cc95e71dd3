package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// TokenSources say where an HTTP server's token comes from (for surf
// serve: $SURF_MCP_TOKEN, --token-file, --tokens, --no-token). At most one
// of Env and File, PrincipalsFile and NoToken is used: Env wins over
// File; PrincipalsFile and NoToken exclude the others.
type TokenSources struct {
	// Env is a token from the environment; surrounding space is trimmed.
	Env string
	// File is a token file (ReadTokenFile) when it exists. When it does
	// not, the token is made and must be written there (Tokens.Made).
	File string
	// PrincipalsFile is a principals file (ReadPrincipals).
	PrincipalsFile string
	// NoToken serves loopback without a token (HTTPOptions.NoToken).
	NoToken bool
	// What names the sources in errors, such as the flags that gave them;
	// zero means "the token file" and "the principals file".
	FileWhat, PrincipalsWhat string
}

// ErrTokenSources is the error of token sources that exclude each other.
var ErrTokenSources = errors.New("token sources exclude each other")

// Tokens are an HTTP server's tokens, read from their sources.
type Tokens struct {
	// Options holds the Token, the Principals or NoToken.
	Options HTTPOptions
	// Made says the token was made here, not read: the server writes it to
	// a file only its user can read once it listens (WriteTokenFile), to
	// File, or where DefaultTokenFile says when File is empty.
	Made bool
	File string
}

// ReadTokens reads the tokens of a server that listens on addr from their
// sources. Without any, on a loopback address (IsLoopbackBind), it makes
// one (GenerateToken), since every local user can reach a loopback port;
// other addresses need one given, which CheckBind says.
func ReadTokens(src TokenSources, addr string) (Tokens, error) {
	var t Tokens
	fileWhat, princWhat := src.FileWhat, src.PrincipalsWhat
	if fileWhat == "" {
		fileWhat = "the token file"
	}
	if princWhat == "" {
		princWhat = "the principals file"
	}
	env := strings.TrimSpace(src.Env)
	switch {
	case src.PrincipalsFile != "" && (env != "" || src.File != "" || src.NoToken):
		return t, fmt.Errorf("%w: %s excludes another token and no token", ErrTokenSources, princWhat)
	case src.NoToken && (env != "" || src.File != ""):
		return t, fmt.Errorf("%w: no token excludes a token", ErrTokenSources)
	case src.PrincipalsFile != "":
		var err error
		t.Options.Principals, err = ReadPrincipals(princWhat, src.PrincipalsFile)
		return t, err
	case src.NoToken:
		t.Options.NoToken = true
		return t, nil
	case env != "":
		t.Options.Token = env
		return t, nil
	case src.File != "":
		_, err := os.Lstat(src.File)
		switch {
		case err == nil:
			t.Options.Token, err = ReadTokenFile(fileWhat, src.File)
			return t, err
		case !errors.Is(err, fs.ErrNotExist):
			return t, fmt.Errorf("%s: %w", fileWhat, err)
		}
		// No file yet: the token is made and written there.
		t.Options.Token, t.Made, t.File = GenerateToken(), true, src.File
		return t, nil
	case IsLoopbackBind(addr):
		t.Options.Token, t.Made = GenerateToken(), true
	}
	return t, nil
}

// DefaultTokenFile is where a server listening on addr writes the token
// it made when no file is named: serve-PORT.token in dir (for surf, its
// runtime directory, 0700 and its user's only).
func DefaultTokenFile(dir string, addr net.Addr) string {
	port := 0
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = ta.Port
	}
	return filepath.Join(dir, fmt.Sprintf("serve-%d.token", port))
}
