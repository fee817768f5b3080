// Package events publishes a run's live updates for harness UIs (SPEC §12,
// `--events`): JSON lines of bounded views of each stream while the
// command runs, paced so that their bytes stay near 100 KB/s whatever the
// command writes, and a last line with the receipt.
//
//	{"kind":"replace","stream":"stdout","text":"...","meta":{...}}        the whole view
//	{"kind":"append","stream":"stdout","text":"...","meta":{...}}         text added at its end
//	{"kind":"slide","stream":"stdout","drop":N,"text":"...","meta":{...}} N characters dropped from its start, text added
//	{"kind":"metadata","stream":"stdout","meta":{...}}                    totals moved, no text
//	{"kind":"final","schema":...}                                         the receipt (SPEC §7), last
//
// A stream's view is the last Options.Chars characters of its display
// text (preview.Sanitize: escapes removed, control bytes escaped), whole
// lines where it can; drop counts characters (Unicode code points). A
// consumer that applies the updates in order holds the view; the last
// update of each stream before "final" makes it the stream's section of
// the final preview (SPEC §5), exactly.
//
// Pacing is global: the first change after an idle period is published at
// once; after a publication of n bytes the next waits max(100 ms, n ×
// 1000 / 102,400) ms, and changes meanwhile collapse into the latest state
// (never a queue); one trailing timer publishes the last change. The
// pipeline's writes only copy bytes into a ring and mark the view dirty:
// a slow or absent reader never slows the command, and a reader that goes
// away (a write error) ends the events, not the run.
package events

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/capwrap/capwrap/receipt"
)

// Pacing of the publications (SPEC §12).
const (
	minDelay = 100 * time.Millisecond
	rate     = 102400 // bytes per second the updates may average
)

// finishGrace bounds how long Finish waits for the events' reader: to
// open a FIFO, or to take the last updates.
const finishGrace = time.Second

// Options configure a Publisher.
type Options struct {
	// Chars is each stream's view bound, in characters: stdout's and
	// stderr's (SPEC §5's preview budgets).
	Chars [2]int
	// Capture returns the capture's directory as the receipt names it
	// ("" until it is made).
	Capture func() string
}

// Publisher publishes a run's updates to the events' sink.
type Publisher struct {
	open    func() (io.WriteCloser, error)
	opt     Options
	srcs    [2]*source
	views   [2]view
	sent    [2]meta // the last meta sent of each stream
	dirty   chan struct{}
	done    chan struct{} // closed by Finish
	stopped chan struct{} // closed when the loop has returned

	mu     sync.Mutex     // the views and the sink, between the loop and Finish
	w      io.WriteCloser // nil until opened
	broken bool           // a write failed: no more events
	next   time.Time      // no publication before this

	// Updates and Bytes count the lines and bytes written (for the
	// benchmark).
	Updates, Bytes int64
}

// streamNames are the streams' names, by index.
var streamNames = [2]string{"stdout", "stderr"}

// New starts a publisher whose sink open opens (it may block: a FIFO
// waits for its reader; the publisher opens it in the background).
func New(open func() (io.WriteCloser, error), opt Options) *Publisher {
	p := &Publisher{open: open, opt: opt, dirty: make(chan struct{}, 1),
		done: make(chan struct{}), stopped: make(chan struct{})}
	for i := range p.srcs {
		c := max(opt.Chars[i], 1)
		p.views[i].cap = c
		// 4 bytes per character and room for escapes and a long line.
		p.srcs[i] = newSource(4*c+2*partialMax, p.markDirty)
	}
	go p.loop()
	return p
}

// Stream is the writer of stream i (0 stdout, 1 stderr) to place in its
// pipeline after the redactor: it sees the bytes the capture file gets.
func (p *Publisher) Stream(i int) io.Writer { return p.srcs[i] }

func (p *Publisher) markDirty() {
	select {
	case p.dirty <- struct{}{}:
	default:
	}
}

// loop opens the sink and publishes each change as the pacing allows,
// until Finish.
func (p *Publisher) loop() {
	defer close(p.stopped)
	w, err := p.open()
	p.mu.Lock()
	p.w, p.broken = w, err != nil
	p.mu.Unlock()
	if err != nil {
		return
	}
	var tick <-chan time.Time
	for {
		select {
		case <-p.dirty:
			if tick != nil {
				continue // a publication is due: this change joins it
			}
			p.mu.Lock()
			next := p.next
			p.mu.Unlock()
			if d := time.Until(next); d > 0 {
				tick = time.After(d)
				continue
			}
			p.publish(false)
		case <-tick:
			tick = nil
			p.publish(false)
		case <-p.done:
			return
		}
		p.mu.Lock()
		broken := p.broken
		p.mu.Unlock()
		if broken {
			return
		}
	}
}

// meta is an update's metadata: the stream's totals so far (bytes and
// lines of the stream as its capture file holds it), what the view shows
// of them and what it leaves out, and the capture's directory.
type meta struct {
	Bytes        int64  `json:"bytes"`
	Lines        int64  `json:"lines"`
	ShownBytes   int64  `json:"shown_bytes"`
	ShownLines   int64  `json:"shown_lines"`
	OmittedBytes int64  `json:"omitted_bytes"`
	OmittedLines int64  `json:"omitted_lines"`
	Capture      string `json:"capture,omitempty"`
}

// event is one line of the events.
type event struct {
	Kind   string `json:"kind"`
	Stream string `json:"stream"`
	Drop   int    `json:"drop,omitempty"`
	Text   string `json:"text,omitempty"`
	Meta   meta   `json:"meta"`
}

// publish writes the updates that bring a consumer to the current state
// of both streams (eof: the streams have ended, a last line without its
// end shows too), then sets the next publication's earliest time.
func (p *Publisher) publish(eof bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var buf bytes.Buffer
	for i := range p.srcs {
		raw, start, total, lines := p.srcs[i].snapshot(p.views[i].rawEnd)
		u := p.views[i].advance(raw, start, eof)
		p.add(&buf, i, u, total, lines, nil)
	}
	p.write(buf.Bytes())
}

// add appends to buf the event of update u of stream i (a metadata event
// when u changes no text but the totals moved; nothing when neither).
// omitted, when not nil, are the bytes and lines the view leaves out (a
// final preview's); else those before the view's start.
func (p *Publisher) add(buf *bytes.Buffer, i int, u update, total, lines int64, omitted *[2]int64) {
	v := &p.views[i]
	m := meta{Bytes: total, Lines: lines, OmittedBytes: v.rawStart()}
	m.ShownLines = int64(strings.Count(v.text(), "\n"))
	m.OmittedLines = max(0, lines-m.ShownLines)
	if omitted != nil {
		m.OmittedBytes, m.OmittedLines = omitted[0], omitted[1]
		m.ShownLines = lines - m.OmittedLines
	}
	m.ShownBytes = total - m.OmittedBytes
	if p.opt.Capture != nil {
		m.Capture = p.opt.Capture()
	}
	kind := u.kind
	if kind == "" {
		if m == p.sent[i] || !v.published {
			return
		}
		kind = "metadata"
	}
	p.sent[i] = m
	e := event{Kind: kind, Stream: streamNames[i], Drop: u.drop, Text: u.text, Meta: m}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	enc.Encode(e)
	p.Updates++
}

// write writes b to the sink and sets the pacing's next time; a write
// error ends the events.
func (p *Publisher) write(b []byte) {
	if len(b) == 0 || p.broken {
		return
	}
	if _, err := p.w.Write(b); err != nil {
		p.broken = true
		return
	}
	p.Bytes += int64(len(b))
	p.next = time.Now().Add(max(minDelay, time.Duration(len(b))*time.Second/rate))
}

// Final is how a stream's view ends: its section of the final preview
// (SPEC §5), and the stream bytes and lines that preview leaves out.
type Final struct {
	Text                       string
	OmittedBytes, OmittedLines int64
}

// Finish publishes the end: for each stream that does not end as its
// final[i].Text a replace with that text (its last state otherwise), then
// the receipt as the "final" line; and closes the sink. It waits at most
// about finishGrace for a reader that does not take them (the run does
// not wait on its events).
func (p *Publisher) Finish(final [2]Final, rc *receipt.Receipt) {
	close(p.done)
	select {
	case <-p.stopped:
	case <-time.After(finishGrace):
		return // still opening a FIFO nobody reads, or blocked writing
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.w == nil || p.broken {
			return
		}
		var buf bytes.Buffer
		for i := range p.srcs {
			raw, start, total, lines := p.srcs[i].snapshot(p.views[i].rawEnd)
			u := p.views[i].advance(raw, start, true)
			if total > 0 && p.views[i].text() != final[i].Text {
				p.views[i].set(final[i].Text)
				u = update{kind: "replace", text: final[i].Text}
			}
			p.add(&buf, i, u, total, lines, &[2]int64{final[i].OmittedBytes, final[i].OmittedLines})
		}
		b, err := json.Marshal(rc)
		if err == nil && len(b) > 1 {
			buf.WriteString(`{"kind":"final",`)
			buf.Write(b[1:])
			buf.WriteByte('\n')
			p.Updates++
		}
		p.write(buf.Bytes())
		p.w.Close()
	}()
	select {
	case <-finished:
	case <-time.After(finishGrace):
	}
}
