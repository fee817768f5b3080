package preview

import "bytes"

// Sizing of a Keeper's buffers, in bytes per character of budget (SPEC §5).
const (
	// bytesPerChar is the raw bytes kept per character of display budget:
	// 4 for the widest UTF-8 encoding plus 1 of room for ANSI sequences and
	// carriage-return frames that sanitizing removes.
	bytesPerChar = 5
	// slackBytes is kept in addition, once for the head and once for the
	// tail, so that small budgets still see whole escape sequences and the
	// tail has room to resynchronise on a line start (see syncWindow).
	slackBytes = 512
)

// Keeper retains the head and the tail of one stream in memory bounded by its
// budget: a fixed head prefix plus a ring-buffer tail, like os/exec's
// prefixSuffixSaver. It counts every byte and every newline written, so the
// omitted counts of a preview are exact (SPEC §5).
//
// A Keeper made by NewKeeper(c) never holds more than 5*c + 1025 bytes of
// buffer (head: 5*(c/4) + 512; tail: 5*(c-c/4) + 513, one byte of which only
// serves as context), whatever is written to it. The buffers grow with what
// is written up to those capacities, so a small output costs little. A
// stream longer than the buffers is never shown whole, even when its display
// would fit (only output of more than 4 bytes per character, e.g. dense ANSI
// colour, can be in that case).
//
// Write never fails. A Keeper is not safe for concurrent use: one goroutine
// writes, and Render is called after the last Write.
type Keeper struct {
	headCap int // capacity of head, bytes
	ringCap int // capacity of ring, bytes (tail plus one context byte)

	head  []byte // the first min(total, headCap) bytes of the stream
	ring  []byte // the last bytes after the head; a ring once len(ring) == ringCap
	off   int    // index in ring of the oldest byte once the ring is full
	total int64  // bytes written
	lines int64  // '\n' bytes written
	last  byte   // last byte written
}

// NewKeeper returns a Keeper sized so that Render can show up to maxChars
// characters (Unicode code points) of display text of its stream, 25% from
// the head and the rest from the tail (SPEC §5), whatever the width of the
// characters in bytes. A negative maxChars counts as 0.
//
// To let a failed command's stderr use the budget stdout left over (SPEC §5),
// make the stderr Keeper with the sum of both budgets: Render never shows more
// than Options allows, but it cannot show what the Keeper did not keep.
func NewKeeper(maxChars int) *Keeper {
	maxChars = max(maxChars, 0)
	h := maxChars / 4
	t := maxChars - h
	return newKeeperBytes(bytesPerChar*h+slackBytes, bytesPerChar*t+slackBytes)
}

// newKeeperBytes returns a Keeper that keeps headCap bytes of head and
// tailCap+1 bytes of tail (the oldest of which is context only).
func newKeeperBytes(headCap, tailCap int) *Keeper {
	return &Keeper{headCap: headCap, ringCap: tailCap + 1}
}

// Write records p. It always returns len(p), nil. After the buffers have
// reached their capacity it does not allocate.
func (k *Keeper) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	k.total += int64(n)
	k.lines += int64(bytes.Count(p, newline))
	k.last = p[n-1]

	if room := k.headCap - len(k.head); room > 0 {
		take := min(room, len(p))
		k.head = appendBounded(k.head, p[:take], k.headCap)
		p = p[take:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= k.ringCap {
		// p alone fills the ring: keep its last ringCap bytes, in order.
		if cap(k.ring) < k.ringCap {
			k.ring = make([]byte, k.ringCap)
		}
		k.ring = k.ring[:k.ringCap]
		copy(k.ring, p[len(p)-k.ringCap:])
		k.off = 0
		return n, nil
	}
	if room := k.ringCap - len(k.ring); room > 0 {
		take := min(room, len(p))
		k.ring = appendBounded(k.ring, p[:take], k.ringCap)
		p = p[take:]
	}
	// The ring is full if p is not empty: overwrite the oldest bytes.
	for len(p) > 0 { // at most two iterations
		c := copy(k.ring[k.off:], p)
		p = p[c:]
		k.off += c
		if k.off == k.ringCap {
			k.off = 0
		}
	}
	return n, nil
}

var newline = []byte{'\n'}

// appendBounded appends p to buf, growing buf's capacity at most to limit
// bytes (len(buf)+len(p) must not exceed limit).
func appendBounded(buf, p []byte, limit int) []byte {
	need := len(buf) + len(p)
	if need > cap(buf) {
		c := min(max(2*cap(buf), need, 256), limit)
		nb := make([]byte, len(buf), c)
		copy(nb, buf)
		buf = nb
	}
	return append(buf, p...)
}

// Total returns the number of bytes written.
func (k *Keeper) Total() int64 { return k.total }

// Lines returns the number of newline ('\n') bytes written: the number of
// complete lines of the stream, as in the receipt's "lines" (SPEC §7).
func (k *Keeper) Lines() int64 { return k.lines }

// LastLinePartial reports whether the stream is non-empty and does not end
// with '\n' (the receipt's "last_line_partial", SPEC §7).
func (k *Keeper) LastLinePartial() bool { return k.total > 0 && k.last != '\n' }

// skipped returns the number of bytes that are in neither buffer.
func (k *Keeper) skipped() int64 {
	return k.total - int64(len(k.head)) - int64(len(k.ring))
}

// tail returns a fresh copy of the ring in stream order (oldest byte first).
func (k *Keeper) tail() []byte {
	out := make([]byte, 0, len(k.ring))
	out = append(out, k.ring[k.off:]...)
	return append(out, k.ring[:k.off]...)
}
