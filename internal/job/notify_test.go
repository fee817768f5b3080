package job

import (
	"encoding/json"
	"testing"

	"github.com/capwrap/capwrap/receipt"
	"github.com/capwrap/capwrap/store"
)

// TestNoticeOf: the notice line of each way a capture can have ended.
func TestNoticeOf(t *testing.T) {
	const id = "20261202T031407Z-r7lfj22ma4"
	final := func(p receipt.Process, c receipt.Capture, status int) store.Entry {
		return store.Entry{ID: id, Final: true, Receipt: &receipt.Receipt{Process: p, Capture: c, ExitStatus: new(status)}}
	}
	for _, tc := range []struct {
		e    store.Entry
		want string
	}{
		{final(receipt.Process{State: receipt.ProcessExited, ExitCode: new(3)}, receipt.Capture{State: receipt.CaptureComplete}, 3),
			`{"id":"` + id + `","process":"exited","exit_code":3,"capture":"complete","exit_status":3}`},
		{final(receipt.Process{State: receipt.ProcessSignaled, Signal: new("SIGKILL")}, receipt.Capture{State: receipt.CapturePartial, Reason: new(receipt.ReasonCaptureLimit)}, 137),
			`{"id":"` + id + `","process":"signaled","signal":"SIGKILL","capture":"partial (capture_limit)","exit_status":137}`},
		{store.Entry{ID: id, Abandoned: true, Receipt: &receipt.Receipt{Process: receipt.Process{State: receipt.ProcessRunning}}},
			`{"id":"` + id + `","process":null,"capture":"partial (abandoned)","exit_status":null}`},
	} {
		b, err := json.Marshal(noticeOf(tc.e))
		if err != nil || string(b) != tc.want {
			t.Errorf("notice = %s, %v\nwant     %s", b, err, tc.want)
		}
	}
}
