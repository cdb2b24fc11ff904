package am

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file is the AM's registration with the ResourceManager and its end: register (and again after
// AM_RESYNC or ApplicationMasterNotRegistered), finish (unregister with the outcome), a kill, and the
// staging directory's deletion.

func (a *am) killed() decision.Outcome {
	a.setState(contract.AMState(contract.Killed))
	out := decision.Outcome{Status: contract.Killed, Diagnostics: "the ApplicationMaster was stopped (SIGTERM: the application was killed)"}
	if a.cfg.KeepStagingOnKill {
		// The NodeManager stops an AM container the same way for a kill, preemption, memory or a node
		// going away; only in the first case is this the end. With attempts left, the staging
		// directory stays for the next one (yarn-am kill removes it once the application is KILLED).
		a.log.Info("am: stopped by SIGTERM with attempts left; the staging directory stays for the next attempt")
		a.saveState(context.Background())
		return out
	}
	deleteStaging(a.cfg.Staging, a.log)
	return out
}

// deleteStaging deletes the staging directory through c (config.Staging; nil: nothing to delete).
func deleteStaging(c cleaner, log logrus.FieldLogger) {
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Delete(ctx); err != nil {
		log.WithError(err).Warn("am: could not delete the staging directory")
		return
	}
	log.Info("am: staging directory deleted")
}

func (a *am) register(ctx context.Context) error {
	if r := a.cfg.ReleaseEvents; r != nil {
		defer r() // after adopt restored the earlier attempt's events, or when the registration failed
	}
	req := &hadooppb.RegisterApplicationMasterRequestProto{
		Host:        proto.String(a.cfg.Host),
		RpcPort:     proto.Int32(int32(a.cfg.RPCPort)),
		TrackingUrl: proto.String(a.cfg.TrackingURL),
	}
	c, cancel := callCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := a.cfg.RM.Register(c, req)
	a.metrics.ObserveRPC("registerApplicationMaster", start, err)
	if err != nil {
		return fmt.Errorf("am: registering with the ResourceManager: %w", err)
	}
	maximum := contract.Capability(yarnrpc.ResourceAmounts(resp.GetMaximumCapability()))
	a.log.WithFields(logrus.Fields{"queue": resp.GetQueue(), "maximum": maximum.String(),
		"tracking_url": a.cfg.TrackingURL}).Info("am: registered")
	if resp.GetMaximumCapability() == nil {
		maximum = nil
	}
	var types []string
	for _, ti := range resp.GetResourceTypes() {
		types = append(types, ti.GetName())
	}
	if err := checkAsk(a.cfg.Spec.Capability, a.cfg.Keys, types, maximum); err != nil {
		return &unsatisfiable{why: err.Error(), maximum: maximum}
	}
	a.adopt(ctx, resp)
	a.mu.Lock()
	a.responseID = 0
	if m := resp.GetMaximumCapability(); m != nil {
		a.maxCap = contract.Capability(yarnrpc.ResourceAmounts(m))
	}
	for _, n := range a.policy.Excluded() { // a new registration starts with an empty blacklist too
		a.book.Excl.Exclude(n)
	}
	for n := range a.book.Place.FullNodes() {
		a.book.Excl.Exclude(n)
	}
	a.book.Asks.Registered()
	a.mu.Unlock()
	return nil
}

// unsatisfiable: the ask can never be allocated on this cluster.
type unsatisfiable struct {
	why     string
	maximum contract.Capability // the registration's maximum allocation (nil if not sent)
}

func (u *unsatisfiable) Error() string { return u.why }

// resync registers again (the RM restarted, failed over or asked for it with AM_RESYNC) and marks
// every outstanding ask for sending: the new registration starts with an empty request table.
func (a *am) resync(ctx context.Context) error {
	if err := a.register(ctx); err != nil {
		return err
	}
	a.mu.Lock()
	a.book.Asks.ResendAll()
	a.mu.Unlock()
	return nil
}

// finish stops what still runs, unregisters with the outcome and deletes the staging directory.
func (a *am) finish(ctx context.Context, out decision.Outcome) error {
	a.mu.Lock()
	a.book.End.Finish()
	a.state = contract.StateFinishing
	running := a.rec.Active()
	a.mu.Unlock()
	a.launch.stopAll(ctx, running)
	out.Diagnostics = a.gpuDiagnostics(out.Diagnostics) // GPU-hours reserved and the share used (gpuusage.go)

	status := map[contract.FinalStatus]hadooppb.FinalApplicationStatusProto{
		contract.Succeeded: hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED,
		contract.Failed:    hadooppb.FinalApplicationStatusProto_APP_FAILED,
		contract.Killed:    hadooppb.FinalApplicationStatusProto_APP_KILLED,
	}[out.Status]
	req := &hadooppb.FinishApplicationMasterRequestProto{
		FinalApplicationStatus: status.Enum(),
		Diagnostics:            proto.String(out.Diagnostics),
		TrackingUrl:            proto.String(a.cfg.TrackingURL),
	}
	log := a.log.WithFields(logrus.Fields{"final_status": out.Status, "diagnostics": out.Diagnostics})
	log.Info("am: unregistering")
	var err error
	for i := 0; i < 50; i++ {
		c, cancel := callCtx(ctx)
		var done bool
		start := time.Now()
		done, err = a.cfg.RM.Finish(c, req)
		a.metrics.ObserveRPC("finishApplicationMaster", start, err)
		cancel()
		if errors.Is(err, yarnrpc.ErrApplicationMasterNotRegistered) {
			if err = a.register(ctx); err == nil {
				continue
			}
		}
		if err != nil || done {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}
	a.setState(contract.AMState(out.Status))
	a.mu.Lock()
	a.diagnostics = out.Diagnostics
	a.mu.Unlock()
	ev := events.Finished(out)
	ev.StderrTail = a.driver.stderrTail() // served to the secret's holders only (am/web visibility)
	a.events.Add(ev)
	deleteStaging(a.cfg.Staging, a.log)
	if err != nil {
		return fmt.Errorf("am: unregistering with final status %s: %w", out.Status, err)
	}
	return nil
}
