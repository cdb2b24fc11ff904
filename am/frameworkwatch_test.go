package am

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// TestFrameworkWatchBoundsAndKeepsTheDetails: the framework's details are cut to the contract's
// bounds; a failed read keeps the last details and says why beside them; a framework that says
// nothing has no section.
func TestFrameworkWatchBoundsAndKeepsTheDetails(t *testing.T) {
	if newFrameworkWatch("x", nil, logrus.New()) != nil || (*frameworkWatch)(nil).status() != nil {
		t.Fatal("a framework without details has a watch")
	}
	var answer []contract.Detail
	var fail error
	w := newFrameworkWatch("Flink job", func(context.Context) ([]contract.Detail, error) { return answer, fail }, logrus.New())
	if w.status() != nil {
		t.Fatal("a status before the first read")
	}
	for i := 0; i < contract.MaxDetails+5; i++ {
		answer = append(answer, contract.Detail{Name: strings.Repeat("n", 100), Value: strings.Repeat("v", 1000)})
	}
	if err := w.poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := w.status()
	if s.Title != "Flink job" || len(s.Details) != contract.MaxDetails || len(s.Details[0].Name) != contract.MaxDetailNameBytes ||
		len(s.Details[0].Value) != contract.MaxDetailBytes || s.At.IsZero() {
		t.Fatalf("bounds: %d details, name %d, value %d bytes", len(s.Details), len(s.Details[0].Name), len(s.Details[0].Value))
	}
	s.Details[0].Value = "changed by a reader"
	fail = errors.New("connection refused")
	if err := w.poll(context.Background()); err == nil {
		t.Fatal("the failure is not returned")
	}
	s = w.status()
	if s.Error != "connection refused" || len(s.Details) != contract.MaxDetails || s.Details[0].Value == "changed by a reader" {
		t.Errorf("after a failure: %+v", s)
	}
}

// TestFrameworkEventsReachTheLog: a framework's event is stamped by the AM's log, info by default.
// What it says before the AM registered is held until then and follows the history a later attempt
// restores (its start's checkpoint after the earlier attempt's events, where the status's latest
// events show it), stamped with the time it was said.
func TestFrameworkEventsReachTheLog(t *testing.T) {
	log := events.NewLog(10)
	emit, release := frameworkEmitter(log)
	emit(contract.Event{Type: "flink-job", Message: "Flink job x is RUNNING", ID: 99, Time: time.Unix(1, 0)})
	emit(contract.Event{Type: "flink-job", Severity: contract.SeverityError, Message: strings.Repeat("m", 10000)})
	if n := len(log.Latest(10)); n != 0 {
		t.Fatalf("%d events before the registration", n)
	}
	log.Add(contract.Event{Type: "am-restarted", Message: "the earlier attempt's history"})
	release()
	emit(contract.Event{Type: "flink-job", Message: "after"})
	evs := log.Latest(10)
	if len(evs) != 4 || evs[0].Type != "am-restarted" || evs[1].ID != 2 || evs[1].Severity != contract.SeverityInfo || evs[1].Time.Year() < 2000 || evs[3].Message != "after" {
		t.Fatalf("events: %+v", evs)
	}
	if evs[2].Severity != contract.SeverityError || len(evs[2].Message) != 10*contract.MaxDetailBytes {
		t.Errorf("the second event: severity %s, %d bytes", evs[2].Severity, len(evs[2].Message))
	}
	release() // once more: nothing held, nothing added
	if n := len(log.Latest(10)); n != 4 {
		t.Errorf("%d events after a second release", n)
	}
}

// A framework's series (framework.AM.Series: a Flink job's parallelism per vertex over time) are
// served beside its details, cut to contract.MaxSeries of the newest contract.MaxSeriesPoints.
func TestFrameworkWatchBoundsTheSeries(t *testing.T) {
	w := newFrameworkWatch("Flink job", func(context.Context) ([]contract.Detail, error) { return nil, nil }, logrus.New())
	var series []contract.FrameworkSeries
	for i := 0; i < contract.MaxSeries+3; i++ {
		s := contract.FrameworkSeries{Name: strings.Repeat("s", 1000)}
		for j := 0; j < contract.MaxSeriesPoints+20; j++ {
			s.Points = append(s.Points, contract.SeriesPoint{At: time.Unix(int64(j), 0), Value: int64(j), Note: strings.Repeat("n", 100)})
		}
		series = append(series, s)
	}
	w.series = func() []contract.FrameworkSeries { return series }
	if err := w.poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := w.status()
	if len(s.Series) != contract.MaxSeries || len(s.Series[0].Name) != contract.MaxDetailBytes || len(s.Series[0].Points) != contract.MaxSeriesPoints {
		t.Fatalf("bounds: %d series, name %d bytes, %d points", len(s.Series), len(s.Series[0].Name), len(s.Series[0].Points))
	}
	if p := s.Series[0].Points; p[0].Value != 20 || p[len(p)-1].Value != int64(contract.MaxSeriesPoints+19) || len(p[0].Note) != contract.MaxDetailNameBytes {
		t.Fatalf("not the newest points, or the note not cut: %+v … %+v", p[0], p[len(p)-1])
	}
	series[0].Points[len(series[0].Points)-1].Value = -1
	if w.status().Series[0].Points[contract.MaxSeriesPoints-1].Value == -1 {
		t.Fatal("the status shares the framework's points")
	}
}
