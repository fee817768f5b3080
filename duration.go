package main

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// duration is a time.Duration flag in Go syntax (500ms, 10s, 1h30m) that
// also takes days, as a user writes them for --older-than: 7d, 1d12h,
// 2.5d (a day is 24 hours). Every duration flag, global or a verb's, is
// one, so they all read the same words.
type duration struct{ p *time.Duration }

// durationVar sets *p to def and returns the flag value that sets *p.
func durationVar(p *time.Duration, def time.Duration) *duration {
	*p = def
	return &duration{p}
}

func (v *duration) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

// Type is "duration", as pflag's own duration flags say.
func (v *duration) Type() string { return "duration" }

func (v *duration) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

// durationTerm is one term of a duration: a decimal number and its unit.
var durationTerm = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h|d)`)

// errDuration is the error for what is not a duration at all.
var errDuration = errors.New("not a duration: want a number and a unit, such as 500ms, 10s, 2m, 1h30m, 7d or 2.5d (units ns, us, ms, s, m, h, d)")

// parseDuration reads a duration: Go syntax (time.ParseDuration), plus the
// unit d, 24 hours, in any term: 7d, 1d12h, 2.5d. A sign may only lead;
// "0" needs no unit. The result is at most about 292 years.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg, t = t[0] == '-', t[1:]
	}
	if t == "0" {
		return 0, nil
	}
	if t == "" {
		return 0, errDuration
	}
	tooLong := fmt.Errorf("too long: at most %dd", int64(math.MaxInt64/int64(24*time.Hour)))
	var total time.Duration
	for t != "" {
		m := durationTerm.FindStringSubmatch(t)
		if m == nil {
			return 0, errDuration
		}
		t = t[len(m[0]):]
		num, unit, mult := m[1], m[2], time.Duration(1)
		if unit == "d" {
			unit, mult = "h", 24
		}
		d, err := time.ParseDuration(num + unit)
		if err != nil || d > math.MaxInt64/mult {
			return 0, tooLong // the syntax is right: the number is too big
		}
		d *= mult
		if total > math.MaxInt64-d {
			return 0, tooLong
		}
		total += d
	}
	if neg {
		total = -total
	}
	return total, nil
}
