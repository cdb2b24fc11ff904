package book

import (
	"slices"
	"sort"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// Asks is the AM's side of the ResourceManager's request table: the outstanding asks (keyed by
// allocationRequestId), the ResourceRequests still to send with the next allocate, when each ask was
// first sent, and the id of the next new ask. Reconcile decides (Plan.Asks, Plan.Send); the table
// keeps what was decided until the RM has it. Its verbs are the only writers: Apply (a plan),
// MarkSent (an allocate that carried the requests returned), ResendAll (a new registration forgot
// them), CancelAll (a gang round gave up). The AM's mutex guards it (package doc).
type Asks struct {
	asks []decision.Ask
	// send: ask id → the absolute number of containers to send for it with the next allocate (0
	// cancels it at the RM).
	send map[int64]int
	// sentAt: when each ask was first sent (allocation latency, the UI's timeline).
	sentAt map[int64]time.Time
	nextID int64
	// version changes whenever asks or nextID do: Reconcile's input from this table (allocate.go
	// skips a Reconcile whose inputs did not change).
	version uint64
}

func NewAsks() Asks {
	return Asks{send: map[int64]int{}, sentAt: map[int64]time.Time{}, nextID: 1}
}

// Apply takes the ask half of a plan: the updates to send, the new ask table and the next id. It
// returns a TaskExecutorsRequested event for each ask that wants more containers than before.
// Asks that left the table (their send times too) are forgotten at the next Apply, so that the
// plan's allocations can still look up when their ask was sent (SentAt).
func (t *Asks) Apply(p decision.Plan, now time.Time, c contract.Capability) []contract.Event {
	for id := range t.sentAt {
		if !t.has(id) {
			delete(t.sentAt, id)
		}
	}
	var evs []contract.Event
	for _, s := range p.Send {
		t.send[s.ID] = s.Count
		if s.Count <= 0 {
			continue
		}
		if old := t.want(s.ID); s.Count > old {
			evs = append(evs, events.Requested(s.Count-old, c))
		}
		if _, ok := t.sentAt[s.ID]; !ok {
			t.sentAt[s.ID] = now
		}
	}
	if !slices.Equal(t.asks, p.Asks) || t.nextID != p.NextAskID {
		t.version++
	}
	t.asks, t.nextID = p.Asks, p.NextAskID
	return evs
}

// Table is the outstanding asks (Reconcile's Observed.Asks); the caller does not change it.
func (t *Asks) Table() []decision.Ask { return t.asks }

// NextID is the allocationRequestId of the next new ask (Observed.NextAskID).
func (t *Asks) NextID() int64 { return t.nextID }

// Version changes whenever the table or the next id does (a plan's inputs).
func (t *Asks) Version() uint64 { return t.version }

// ToSend is the ResourceRequests for the next allocate, by ask id.
func (t *Asks) ToSend() []decision.AskUpdate {
	out := make([]decision.AskUpdate, 0, len(t.send))
	for id, n := range t.send {
		out = append(out, decision.AskUpdate{ID: id, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// MarkSent: an allocate that carried sent returned; what was not changed since needs no sending.
func (t *Asks) MarkSent(sent []decision.AskUpdate) {
	for _, s := range sent {
		if n, ok := t.send[s.ID]; ok && n == s.Count {
			delete(t.send, s.ID)
		}
	}
}

// Registered: a new registration starts with an empty request table at the RM, so Reconcile sends
// every ask again (nothing is at the RM).
func (t *Asks) Registered() {
	for i := range t.asks {
		if t.asks[i].AtRM != 0 {
			t.asks[i].AtRM = 0
			t.version++
		}
	}
}

// ResendAll marks every ask that still wants containers for sending with the next allocate (the RM
// re-synced: it lost its request table).
func (t *Asks) ResendAll() {
	for i := range t.asks {
		if k := &t.asks[i]; k.Want > 0 {
			t.send[k.ID] = k.Want
			if k.AtRM != k.Want {
				k.AtRM = k.Want
				t.version++
			}
		}
	}
}

// Resend marks ask id for sending again with the next allocate, with what it still wants (the RM
// rejected its SchedulingRequest: it holds nothing of it).
func (t *Asks) Resend(id int64) {
	if n := t.want(id); n > 0 {
		t.send[id] = n
	}
}

// CancelAll withdraws every ask: nothing more is wanted from them (sent as 0).
func (t *Asks) CancelAll() {
	for i := range t.asks {
		if k := &t.asks[i]; k.Want > 0 {
			k.Want = 0
			t.send[k.ID] = 0
			t.version++
		}
	}
}

// Pending is how many containers the asks still want.
func (t *Asks) Pending() int {
	n := 0
	for _, k := range t.asks {
		n += k.Want
	}
	return n
}

// Busy: an ask wants containers or a request waits to be sent (the heartbeat stays fast).
func (t *Asks) Busy() bool { return len(t.send) > 0 || t.Pending() > 0 }

// SentAt is when ask id was first sent (zero if unknown).
func (t *Asks) SentAt(id int64) (time.Time, bool) {
	at, ok := t.sentAt[id]
	return at, ok
}

// Waited is how long ask id waited for an allocation at now (false, 0: not known).
func (t *Asks) Waited(id int64, now time.Time) (time.Duration, bool) {
	at, ok := t.sentAt[id]
	if !ok {
		return 0, false
	}
	return now.Sub(at), true
}

// Spread says whether ask id is a Spread ask (locality.go).
func (t *Asks) Spread(id int64) bool {
	for _, k := range t.asks {
		if k.ID == id {
			return k.Spread
		}
	}
	return false
}

// SendingSpread: a Spread ask wanting containers is about to be sent.
func (t *Asks) SendingSpread() bool {
	for id, n := range t.send {
		if n > 0 && t.Spread(id) {
			return true
		}
	}
	return false
}

// Status is the asks as the status document lists them, and how many containers they want.
func (t *Asks) Status() (asks []contract.AskStatus, requested int) {
	for _, k := range t.asks {
		requested += k.Want
		if k.Want > 0 {
			asks = append(asks, contract.AskStatus{ID: k.ID, Pending: k.Want, Since: t.sentAt[k.ID]})
		}
	}
	return asks, requested
}

func (t *Asks) want(id int64) int {
	for _, k := range t.asks {
		if k.ID == id {
			return k.Want
		}
	}
	return 0
}

func (t *Asks) has(id int64) bool {
	for _, k := range t.asks {
		if k.ID == id {
			return true
		}
	}
	return false
}
