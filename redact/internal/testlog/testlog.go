// Package testlog makes the log text the redactor's tests and benchmarks
// run on, in redact and in its internal matcher alike: build and test
// output with keywords in test names and paths, and, on request,
// credentials. Only tests import it.
package testlog

import (
	"fmt"
	"math/rand"
	"strings"
)

// Make returns about size bytes of a pytest- and compiler-style log, the
// same for the same arguments. With secretEvery > 0, every secretEvery-th
// line carries a credential (rotating through several shapes and the value
// of VAULT_CREDENTIAL in redact's benchmarks).
func Make(size, secretEvery int) []byte {
	r := rand.New(rand.NewSource(1))
	mods := []string{"api", "util", "models", "auth_flow", "parser", "cache", "session_store", "tokenize"}
	funcs := []string{"test_list", "test_create_user", "test_password_reset", "test_token_refresh", "test_parse_header", "test_secret_rotation", "test_zero", "test_basic_auth"}
	status := []string{"PASSED", "PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"}
	secrets := []string{
		"export GITHUB_TOKEN=ghp_" + strings.Repeat("aB3dE5gH7j", 3) + "K9mN0p",
		"aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
		"curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U' https://api.example.com/v1",
		"DATABASE_URL=postgres://app:Sup3rS3cret@db.internal:5432/app",
		"connecting with password=hunter2-but-longer to replica",
		"loaded credential s3cr3t-v4lu3-0123456789 from vault",
	}
	var b strings.Builder
	n := 0
	for b.Len() < size {
		n++
		if secretEvery > 0 && n%secretEvery == 0 {
			b.WriteString(secrets[(n/secretEvery)%len(secrets)])
			b.WriteByte('\n')
			continue
		}
		switch r.Intn(10) {
		case 0:
			fmt.Fprintf(&b, "src/%s/%s.c:%d:%d: warning: unused variable 'tmp%d' [-Wunused-variable]\n", mods[r.Intn(len(mods))], mods[r.Intn(len(mods))], r.Intn(2000), r.Intn(80), r.Intn(100))
		case 1:
			fmt.Fprintf(&b, "gcc -O2 -Wall -Iinclude -c src/%s.c -o build/%s.o\n", mods[r.Intn(len(mods))], mods[r.Intn(len(mods))])
		case 2:
			fmt.Fprintf(&b, "  File \"/usr/lib/python3.12/site-packages/app/%s.py\", line %d, in %s\n", mods[r.Intn(len(mods))], r.Intn(900), funcs[r.Intn(len(funcs))])
		case 3:
			fmt.Fprintf(&b, "E       AssertionError: assert %d == %d (commit %016x%016x)\n", r.Intn(100), r.Intn(100), r.Uint64(), r.Uint64())
		default:
			fmt.Fprintf(&b, "tests/test_%s.py::%s[case-%d] %s%s[%3d%%]\n", mods[r.Intn(len(mods))], funcs[r.Intn(len(funcs))], r.Intn(50), status[r.Intn(len(status))], strings.Repeat(" ", 20+r.Intn(20)), r.Intn(101))
		}
	}
	return []byte(b.String())
}
