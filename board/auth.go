package board

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
)

// authOptions are the NATS options of the configured credentials, TLS
// files and nkey seed. Each file is checked here, so a missing or
// unreadable one is named in a clear error before any connection; the
// errors name the files and never quote what is in them.
func (c Config) authOptions() ([]nats.Option, error) {
	var opts []nats.Option
	readable := func(what, file string) error {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("%s: %w", what, pathError(err))
		}
		return f.Close()
	}
	if c.Creds != "" {
		if err := readable("NATS credentials", c.Creds); err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserCredentials(c.Creds))
	}
	if c.TLSCA != "" {
		pem, err := os.ReadFile(c.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("the TLS CA: %w", pathError(err))
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the TLS CA %s holds no PEM certificate", c.TLSCA)
		}
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	switch {
	case c.TLSCert != "" && c.TLSKey != "":
		if err := readable("the TLS client certificate", c.TLSCert); err != nil {
			return nil, err
		}
		if err := readable("the TLS client key", c.TLSKey); err != nil {
			return nil, err
		}
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	case c.TLSCert != "" || c.TLSKey != "":
		return nil, errors.New("a TLS client certificate needs both the certificate and its key")
	}
	if c.NKeySeed != "" {
		if err := readable("the nkey seed", c.NKeySeed); err != nil {
			return nil, err
		}
		opt, err := nats.NkeyOptionFromSeed(c.NKeySeed)
		if err != nil {
			// nats.go's message may carry a line of the file: name it only
			return nil, fmt.Errorf("the nkey seed %s holds no user seed", c.NKeySeed)
		}
		opts = append(opts, opt)
	}
	return opts, nil
}

// pathError is err without the operation ("open"), which says nothing
// to the reader.
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// connectError is a failed connection's error, with a word on what to
// check for the common causes.
func (c Config) connectError(url string, err error) error {
	msg := fmt.Sprintf("connecting to NATS at %s", RedactURL(url))
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("%s: the server's certificate is not signed by the TLS CA given (check the CA file): %w", msg, err)
	case errors.As(err, &invalid), errors.As(err, &host):
		return fmt.Errorf("%s: the server's certificate is not valid for it: %w", msg, err)
	case c.TLSCert == "" && (strings.Contains(err.Error(), "closed by remote after TLS handshake") || strings.Contains(err.Error(), "certificate required")):
		// nats.go's words for a server that hung up on a client without
		// a certificate (EOF or a reset after the handshake), or TLS 1.3's
		// alert
		return fmt.Errorf("%s: the server closed the connection after the TLS handshake: it may require a client certificate, which none was given: %w", msg, err)
	case errors.Is(err, nats.ErrAuthorization):
		return fmt.Errorf("%s: the server refused the credentials, nkey or client certificate: %w", msg, err)
	}
	return fmt.Errorf("%s: %w", msg, err)
}
