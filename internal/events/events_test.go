package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/receipt"
)

// folded is the reference consumer of SPEC §12: it applies each update
// to its stream's view, in order, and remembers the final line.
type folded struct {
	views   map[string]string
	kinds   map[string]int
	final   map[string]any
	updates int
}

func fold(t testing.TB, r io.Reader) folded {
	t.Helper()
	f := folded{views: map[string]string{}, kinds: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if f.final != nil {
			t.Fatalf("an event after the final line: %s", sc.Text())
		}
		f.updates++
		kind, _ := e["kind"].(string)
		stream, _ := e["stream"].(string)
		text, _ := e["text"].(string)
		f.kinds[kind]++
		switch kind {
		case "replace":
			f.views[stream] = text
		case "append":
			f.views[stream] += text
		case "slide":
			drop := int(e["drop"].(float64))
			v := []rune(f.views[stream])
			if drop > len(v) {
				t.Fatalf("slide drops %d of a view of %d characters", drop, len(v))
			}
			f.views[stream] = string(v[drop:]) + text
		case "metadata":
		case "final":
			f.final = e
		default:
			t.Fatalf("unknown kind %q", kind)
		}
	}
	return f
}

// pipeSink is an events sink the test reads.
type pipeSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *pipeSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}
func (s *pipeSink) Close() error { return nil }

// TestFoldEqualsView: whatever the writes (lines, long lines, carriage
// returns, escapes, multi-byte characters cut between writes, bursts
// larger than the view), a consumer that folds the updates holds exactly
// the view after each publication, and the final text after Finish.
func TestFoldEqualsView(t *testing.T) {
	pieces := []string{"line\n", "é日本\n", "progress 10%\rprogress 20%\r", "\x1b[31mred\x1b[0m\n", strings.Repeat("x", 5000),
		"\n", "tab\there\n", "\xe6\x97", "\xa5\n", strings.Repeat("long line ", 2000) + "\n", "\x00ctl\n"}
	for seed := range 20 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 1))
			sink := &pipeSink{}
			p := New(func() (io.WriteCloser, error) { return sink, nil }, Options{Chars: [2]int{300 + rng.IntN(3000), 200}})
			<-waitOpen(p)
			for range 200 {
				s := rng.IntN(2)
				p.Stream(s).Write([]byte(pieces[rng.IntN(len(pieces))]))
				if rng.IntN(10) == 0 {
					p.publishNow(false)
					f := fold(t, bytes.NewReader(sink.snapshot()))
					for i, name := range streamNames {
						view := p.text(i)
						if got := f.views[name]; got != view {
							t.Fatalf("%s: folded %q\nview %q", name, got, view)
						}
						if n := utf8.RuneCountInString(view); n > p.views[i].cap {
							t.Fatalf("%s: view of %d characters, cap %d", name, n, p.views[i].cap)
						}
					}
				}
			}
			final := [2]Final{{Text: "head\n... 3 lines omitted ...\ntail\n"}, {Text: "é\n"}}
			p.Finish(final, &receipt.Receipt{Schema: receipt.Schema})
			f := fold(t, bytes.NewReader(sink.snapshot()))
			if f.final == nil || f.final["schema"] != receipt.Schema {
				t.Fatalf("final line %v", f.final)
			}
			for i, name := range streamNames {
				if f.views[name] != final[i].Text {
					t.Errorf("%s ends as %q, want %q", name, f.views[name], final[i].Text)
				}
			}
		})
	}
}

// waitOpen returns a channel closed once p's sink is open (the loop
// opens it in the background).
func waitOpen(p *Publisher) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		for {
			p.mu.Lock()
			open := p.w != nil
			p.mu.Unlock()
			if open {
				close(c)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return c
}

// publishNow publishes at once, whatever the pacing.
func (p *Publisher) publishNow(eof bool) { p.publish(eof) }

// text is stream i's view as the publisher holds it.
func (p *Publisher) text(i int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.views[i].text()
}

func (s *pipeSink) snapshot() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.buf.Bytes()...)
}

// TestPacing: a command that writes without pause gets updates no faster
// than the pacing allows: after n bytes, the next no sooner than
// max(100 ms, n/102,400 s); many writes collapse into few updates.
func TestPacing(t *testing.T) {
	sink := &timedSink{}
	p := New(func() (io.WriteCloser, error) { return sink, nil }, Options{Chars: [2]int{50000, 2000}})
	line := []byte(strings.Repeat("y", 99) + "\n")
	deadline := time.Now().Add(1500 * time.Millisecond)
	writes := 0
	for time.Now().Before(deadline) {
		p.Stream(0).Write(line)
		writes++
	}
	p.Finish([2]Final{}, &receipt.Receipt{})
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.at) < 2 {
		t.Fatalf("%d publications", len(sink.at))
	}
	for i := 1; i < len(sink.at)-1; i++ { // the last, Finish's, is forced
		gap := sink.at[i].Sub(sink.at[i-1])
		want := max(minDelay, time.Duration(sink.n[i-1])*time.Second/rate)
		if gap < want-5*time.Millisecond {
			t.Errorf("publication %d came %v after one of %d bytes, want at least %v", i, gap, sink.n[i-1], want)
		}
	}
	if len(sink.at) > writes/100 {
		t.Errorf("%d publications for %d writes: they did not collapse", len(sink.at), writes)
	}
}

type timedSink struct {
	mu sync.Mutex
	at []time.Time
	n  []int
}

func (s *timedSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = append(s.at, time.Now())
	s.n = append(s.n, len(p))
	return len(p), nil
}
func (s *timedSink) Close() error { return nil }

// TestSlowReaderDoesNotBlock: a sink that never returns from Write (a
// FIFO nobody reads) holds neither the stream's writes nor, beyond its
// grace, Finish.
func TestSlowReaderDoesNotBlock(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	p := New(func() (io.WriteCloser, error) { return blockingSink{block}, nil }, Options{Chars: [2]int{100, 100}})
	done := make(chan struct{})
	go func() {
		for range 100000 {
			p.Stream(0).Write([]byte("a line of output\n"))
		}
		p.Finish([2]Final{}, &receipt.Receipt{})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("writes or Finish blocked on a sink that does not read")
	}
}

type blockingSink struct{ c chan struct{} }

func (b blockingSink) Write(p []byte) (int, error) { <-b.c; return 0, io.ErrClosedPipe }
func (b blockingSink) Close() error                { return nil }

// TestBrokenSink: a reader that goes away ends the events: no write after
// the first error.
func TestBrokenSink(t *testing.T) {
	s := &failingSink{}
	p := New(func() (io.WriteCloser, error) { return s, nil }, Options{Chars: [2]int{100, 100}})
	for range 1000 {
		p.Stream(0).Write([]byte("x\n"))
	}
	p.Finish([2]Final{{Text: "x\n"}}, &receipt.Receipt{})
	if s.calls != 1 {
		t.Errorf("%d writes, want 1 (the one that failed)", s.calls)
	}
}

type failingSink struct{ calls int }

func (f *failingSink) Write(p []byte) (int, error) { f.calls++; return 0, io.ErrClosedPipe }
func (f *failingSink) Close() error                { return nil }

// TestViewAdvance: the updates of one view, step by step.
func TestViewAdvance(t *testing.T) {
	v := view{cap: 10}
	steps := []struct {
		raw  string
		eof  bool
		want update
		text string
	}{
		{"ab\n", false, update{kind: "replace", text: "ab\n"}, "ab\n"},
		{"cd", false, update{}, "ab\n"}, // a line without its end waits
		{"e\n", false, update{kind: "append", text: "cde\n"}, "ab\ncde\n"},
		{"fgh\n", false, update{kind: "slide", drop: 3, text: "fgh\n"}, "cde\nfgh\n"},
		{"\x1b[1mé\x1b[0m\n", false, update{kind: "append", text: "é\n"}, "cde\nfgh\né\n"}, // 10 characters: no drop
		{"tail", true, update{kind: "slide", drop: 4, text: "tail"}, "fgh\né\ntail"},
	}
	var raw []byte
	for i, s := range steps {
		start := int64(len(raw))
		raw = append(raw, s.raw...)
		u := v.advance(raw[v.rawEnd:], v.rawEnd, s.eof)
		_ = start
		if u != s.want || v.text() != s.text {
			t.Errorf("step %d: %+v, view %q; want %+v, %q", i, u, v.text(), s.want, s.text)
		}
	}
	// A burst longer than the view, and bytes the source lost: a replace.
	big := strings.Repeat("z\n", 50)
	raw = append(raw, big...)
	if u := v.advance(raw[len(raw)-20:], int64(len(raw)-20), false); u.kind != "replace" || utf8.RuneCountInString(v.text()) > 10 {
		t.Errorf("after a loss: %+v, view %q", u, v.text())
	}
}

// TestRenderSectionsFold: the final text of a stream is its section of
// the preview Render prints.
func TestRenderSectionsFold(t *testing.T) {
	ko, ke := preview.NewKeeper(100), preview.NewKeeper(100)
	ko.Write([]byte(strings.Repeat("out\n", 200)))
	ke.Write([]byte("err\n"))
	text, _, _, sec := preview.RenderSections(preview.Stream{Keeper: ko}, preview.Stream{Keeper: ke}, preview.Options{StdoutChars: 100, StderrChars: 100})
	if got := string(text[sec[1][0]:sec[1][1]]); got != "err\n" {
		t.Errorf("stderr section %q", got)
	}
	if got := string(text[sec[0][0]:sec[0][1]]); !strings.HasPrefix(got, "out\n") || !strings.Contains(got, "omitted") || strings.Contains(got, "--- stderr") {
		t.Errorf("stdout section %q", got)
	}
}
