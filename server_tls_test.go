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

// TestServerProductionTLS runs the server (in-process) in production mode over TLS with
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
	p := start(t, append(jobsOff, "MEMBRANE_MODE=production", "MEMBRANE_TLS_CERT_FILE="+certFile, "MEMBRANE_TLS_KEY_FILE="+keyFile,
		"MEMBRANE_PERSISTED_QUERIES_ALLOW_LIST="+opsFile)...)

	roots := x509.NewCertPool()
	roots.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: 30 * time.Second}
	base := "https://" + p.Addr
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
	if resp, err := http.Get("http://" + p.Addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered")
		}
	}
	p.Stop(t)
}
