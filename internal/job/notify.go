package job

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/capwrap/capwrap/internal/guard"
	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// NoticePrefix starts each line `capwrap wait --notify` prints on stdout,
// one per job whose end it reports.
const NoticePrefix = "capwrap-ended "

// notice is the JSON of a notice line: the job's ID, its process state
// (null when unknown: abandoned) with exit code or signal, the capture's
// state as list shows it ("complete", "partial (abandoned)"), and the
// status a wait would exit with (null when unknown).
type notice struct {
	ID         string                `json:"id"`
	Process    *receipt.ProcessState `json:"process"`
	ExitCode   *int                  `json:"exit_code,omitempty"`
	Signal     *string               `json:"signal,omitempty"`
	Capture    string                `json:"capture"`
	ExitStatus *int                  `json:"exit_status"`
}

// noticeOf is the notice of ended capture e.
func noticeOf(e store.Entry) notice {
	state, code, sig := e.ProcessStatus()
	n := notice{ID: e.ID, ExitCode: code, Signal: sig, Capture: e.CaptureStatus().String()}
	if state != receipt.ProcessUnknown {
		n.Process = &state
	}
	if e.Final && e.Receipt != nil {
		n.ExitStatus = e.Receipt.ExitStatus
	}
	return n
}

// Notify is `capwrap wait --notify [--cursor NAME] [--timeout D] ID...`
// (SPEC §8: a job's completion is reported once per consumer, apart from
// reads): it waits until at least one of the jobs ids has ended (final or
// abandoned) without its end having been reported to consumer, then
// prints one NoticePrefix line for each such job and records the report
// in the job's capture directory ([store.Dir.MarkNotified]), which no
// read touches. The record is made before the line is printed, so that
// of any number of concurrent calls for one consumer exactly one prints
// it. When every job's end was reported to consumer already it returns at
// once, printing nothing. With timeout > 0 and no job to report by then it
// returns ExitHandedBack (75, as wait's hand-back: try again later). It
// returns 0 when it reported a job or had none left to report, 1 when a
// capture could not be read or recorded.
func Notify(v View, ids []string, consumer string, timeout time.Duration) int {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	g := guard.New(v.Stall)
	done := make(map[string]bool, len(ids)) // reported, by this call or before
	for {
		reported, running := 0, 0
		for _, id := range ids {
			if done[id] {
				continue
			}
			var e store.Entry
			var err error
			if herr := g.Do("reading the tool-outputs directory", func() { e, err = v.Dir.Entry(id) }, nil); herr != nil {
				err = herr
			}
			if err != nil {
				v.Diag.Errorf("wait %s: %v", id, store.UnwrapPath(err))
				return 1
			}
			if !e.Final && !e.Abandoned {
				running++
				continue
			}
			done[id] = true
			first, err := v.Dir.MarkNotified(id, consumer)
			switch {
			case err != nil && !first:
				v.Diag.Errorf("wait %s: cannot record its end for %s: %v", id, consumer, store.UnwrapPath(err))
				return 1
			case err != nil:
				v.Diag.Warnf("capture %s: its end's report to %s may not survive a crash: %v", id, consumer, store.UnwrapPath(err))
			}
			if first {
				b, _ := json.Marshal(noticeOf(e))
				fmt.Fprintf(v.Stdout, "%s%s\n", NoticePrefix, b)
				reported++
			}
		}
		switch {
		case reported > 0:
			return 0
		case running == 0:
			v.Diag.Hintf("nothing to report: the end of every job named was reported to %s already", consumer)
			return 0
		case !deadline.IsZero() && time.Now().After(deadline):
			v.Diag.Hintf("no job named ended within --timeout %v: wait --notify again", timeout)
			return ExitHandedBack
		}
		time.Sleep(jobPoll)
	}
}
