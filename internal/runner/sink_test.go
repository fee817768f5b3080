package runner

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/capwrap/capwrap/redact"
)

// TestSinkWaitsForPolicy: a sink made before the policy is ready redacts
// from its first byte (the write waits inside the policy's ready function,
// and nothing reaches dst meanwhile), passes bytes through with redaction
// off, and writes nothing when the policy failed (fail closed).
func TestSinkWaitsForPolicy(t *testing.T) {
	p, err := redact.NewPolicy(redact.Options{Values: []string{"hunter2hunter2"}})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	ready := sync.OnceValues(func() (*redact.Policy, error) {
		close(entered) // the writer is waiting for the policy now
		<-release
		return p, nil
	})
	var out bytes.Buffer
	s := &sink{dst: &out, ready: ready}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Write([]byte("pw hunter2hunter2 end\n"))
		s.Close()
	}()
	<-entered
	select {
	case <-done:
		t.Fatal("Write returned before the policy was ready")
	default:
	}
	if out.Len() != 0 {
		t.Fatalf("%q reached dst before the policy was ready", out.String())
	}
	close(release)
	<-done
	if got := out.String(); strings.Contains(got, "hunter2") || !strings.Contains(got, "[REDACTED") {
		t.Fatalf("output %q: secret not redacted", got)
	}

	out.Reset()
	off := &sink{dst: &out, ready: func() (*redact.Policy, error) { return nil, nil }}
	off.Write([]byte("pw hunter2hunter2\n"))
	off.Close()
	if out.String() != "pw hunter2hunter2\n" {
		t.Fatalf("--no-redact output %q", out.String())
	}

	out.Reset()
	bad := &sink{dst: &out, ready: func() (*redact.Policy, error) { return nil, errors.New("boom") }}
	if n, err := bad.Write([]byte("pw hunter2hunter2\n")); n != 18 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	bad.Close()
	if out.Len() != 0 {
		t.Fatalf("failed policy let %q through", out.String())
	}
}
