package board

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // its certificate, PEM
}

func newCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{cert: cert, key: key, file: filepath.Join(dir, name+".pem")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// issue writes a certificate for name signed by ca, and its key; a
// server's is for 127.0.0.1.
func (ca *testCA) issue(t *testing.T, dir, name string, server bool) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// seedFile writes a new nkey user's seed to a file and returns the file
// and the user's public key.
func seedFile(t *testing.T, dir, name string) (file, public string, seed []byte) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	if seed, err = kp.Seed(); err != nil {
		t.Fatal(err)
	}
	if public, err = kp.PublicKey(); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, name+".nk")
	if err := os.WriteFile(file, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, public, seed
}

// Issue 31, "a cluster for real": a NATS server with JetStream that
// speaks only TLS, verifies its clients' certificates against its CA and
// knows one nkey user. The board opens on it with the CA, a client
// certificate and the user's seed, and works; a wrong CA, a missing
// client certificate, another user's seed and files that are not there
// give clear errors; no error or log line holds the seed.
func TestTLSNkeyConnection(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, dir, "ca")
	srvCert, srvKey := ca.issue(t, dir, "server", true)
	cliCert, cliKey := ca.issue(t, dir, "client", false)
	seed, pub, seedBytes := seedFile(t, dir, "user")
	otherSeed, _, otherBytes := seedFile(t, dir, "other")
	wrongCA := newCA(t, dir, "wrong-ca")

	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: srvCert, KeyFile: srvKey, CaFile: ca.file, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: "tls", Host: "127.0.0.1", Port: -1,
		JetStream: true, StoreDir: filepath.Join(dir, "js"), NoSigs: true, NoLog: true,
		TLS: true, TLSVerify: true, TLSConfig: tc, TLSTimeout: 10,
		Nkeys: []*server.NkeyUser{{Nkey: pub}},
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(20 * time.Second) {
		t.Fatal("the TLS server did not start")
	}
	url := srv.ClientURL()
	ctx := testCtx(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	good := Config{URL: url, TLSCA: ca.file, TLSCert: cliCert, TLSKey: cliKey, NKeySeed: seed, Logger: logger}

	b, err := Open(ctx, good)
	if err != nil {
		t.Fatalf("opening the board over TLS with an nkey: %v", err)
	}
	if _, err := b.Add(ctx, Task{ID: "tls", Instruction: "over TLS"}); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Get(ctx, "tls"); err != nil || r.State != Ready {
		t.Fatalf("the task over TLS: %+v %v", r, err)
	}
	if st, err := b.nc.TLSConnectionState(); err != nil || !st.HandshakeComplete || len(st.PeerCertificates) == 0 {
		t.Errorf("the connection is not TLS: %v", err)
	}
	b.Close()

	bad := func(name string, mutate func(*Config), want string) {
		t.Run(name, func(t *testing.T) {
			cfg := good
			mutate(&cfg)
			b, err := Open(ctx, cfg)
			if err == nil {
				b.Close()
				t.Fatalf("opened the board, want an error saying %q", want)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want it to say %q", err, want)
			}
			for _, s := range [][]byte{seedBytes, otherBytes} {
				if bytes.Contains([]byte(err.Error()), s) {
					t.Errorf("the error quotes a seed: %v", err)
				}
			}
		})
	}
	bad("wrong CA", func(c *Config) { c.TLSCA = wrongCA.file }, "not signed by the TLS CA given")
	bad("no client certificate", func(c *Config) { c.TLSCert, c.TLSKey = "", "" }, "it may require a client certificate, which none was given")
	bad("certificate without key", func(c *Config) { c.TLSKey = "" }, "needs both the certificate and its key")
	bad("another user", func(c *Config) { c.NKeySeed = otherSeed }, "refused the credentials")
	bad("seed file missing", func(c *Config) { c.NKeySeed = filepath.Join(dir, "nope.nk") }, "the nkey seed: "+filepath.Join(dir, "nope.nk"))
	bad("not a seed", func(c *Config) { c.NKeySeed = cliCert }, "holds no user seed")
	bad("CA that is no certificate", func(c *Config) { c.TLSCA = otherSeed }, "holds no PEM certificate")
	bad("embedded server", func(c *Config) { c.URL, c.Dir = "", t.TempDir() }, "not the embedded server")
	for _, s := range [][]byte{seedBytes, otherBytes} {
		if bytes.Contains(logs.Bytes(), s) {
			t.Errorf("the board's log holds a seed:\n%s", logs.String())
		}
	}
}
