package main_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/neo4jtest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key to dir and
// returns their paths and the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "membrane-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// waitListening reads p's log until it listens.
func waitListening(t *testing.T, p *process) {
	t.Helper()
	var logs []string
	timeout := time.After(90 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("server exited before listening:\n%s", strings.Join(logs, "\n"))
			}
			logs = append(logs, line)
			if strings.Contains(line, "membrane listening") {
				go func() {
					for range p.lines {
					}
				}()
				return
			}
		case <-timeout:
			t.Fatalf("server did not start:\n%s", strings.Join(logs, "\n"))
		}
	}
}

// TestServerProductionTLS runs the binary in production mode over TLS with
// an allow-list: /healthz answers over https, GraphiQL and introspection
// are off, and only the listed operation runs.
func TestServerProductionTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, cert := selfSigned(t, dir)
	allowed := `{ records(first: 0) { totalCount } }`
	sum := sha256.Sum256([]byte(allowed))
	ops, _ := json.Marshal(map[string]string{hex.EncodeToString(sum[:]): allowed})
	opsFile := filepath.Join(dir, "ops.json")
	if err := os.WriteFile(opsFile, ops, 0o600); err != nil {
		t.Fatal(err)
	}
	// The test key opens the records other packages' tests seal in the
	// shared database, which the server's start-up backfill may read.
	sealKey := neo4jtest.TestSealKey.ID + ":" + base64.StdEncoding.EncodeToString(neo4jtest.TestSealKey.Key)
	p := start(t, append(jobsOff, "MEMBRANE_MODE=production", "MEMBRANE_TLS_CERT_FILE="+certFile, "MEMBRANE_TLS_KEY_FILE="+keyFile,
		"MEMBRANE_PERSISTED_QUERIES_ALLOW_LIST="+opsFile, "MEMBRANE_ENCRYPTION_KEY="+sealKey)...)
	waitListening(t, p)

	roots := x509.NewCertPool()
	roots.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: 30 * time.Second}
	base := "https://" + p.addr
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(query string) (int, string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"query": query})
		resp, err := client.Post(base+"/graphql", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	if code, body := get("/healthz"); code != http.StatusOK || !strings.Contains(body, "ok") {
		t.Fatalf("/healthz over https = %d %s", code, body)
	}
	if code, _ := get("/"); code != http.StatusNotFound {
		t.Fatalf("GraphiQL in production = %d", code)
	}
	if code, body := post(allowed); code != http.StatusOK || !strings.Contains(body, "totalCount") {
		t.Fatalf("allowed operation = %d %s", code, body)
	}
	if code, body := post(`{ __schema { queryType { name } } }`); code != http.StatusUnprocessableEntity || !strings.Contains(body, "PERSISTED_QUERY_NOT_ALLOWED") {
		t.Fatalf("introspection = %d %s", code, body)
	}
	if resp, err := http.Get("http://" + p.addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered")
		}
	}
	p.stop(t)
}
