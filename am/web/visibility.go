package web

import "github.com/yarn-am/yarn-am/contract"

// This file decides what an anonymous reader sees (docs/security.md#what-anonymous-readers-see). The
// plain port and the HTTPS port without the secret are open to anyone who can reach the AM's node, so
// they show this application and nothing that helps an attacker on a shared cluster:
//
//   - rank 0's address and port (a gang's MasterAddr and MasterPort) are published seconds before rank
//     0's framework binds the port; whoever reads them could bind it first and receive the other
//     ranks' connections. Anonymous readers get the rank and round only; the launchers, which hold
//     the secret, read the whole rendezvous over HTTPS.
//   - the node inventory (every node's capacity and use) is the whole cluster's, not the
//     application's: anonymous readers get only the nodes this application's containers run on,
//     enough for the web UI's device map of its own containers.
//   - the stderr tails of failed workers and of the driver: a program's last lines can quote its
//     environment, its input or a password it was given; they are redacted of the secrets the AM
//     knows (the application secret, delegation token passwords), but not of the program's own.
//     Anonymous readers get the exit (status, class, and a diagnostics line that points to
//     `yarn-am status` with the secret and to `yarn-am logs`), not the text, in the events of the
//     status too (TestAnonymousReadersGetNoStderrTail).
//   - an event's Detail: the addresses a framework's process bound (a Flink JobManager's RPC and
//     REST ports), which only the framework's own clients need; anonymous readers get the event's
//     message, which leaves them out (TestAnonymousReadersGetNoStderrTail).

// anonymousStatus is s as an anonymous reader sees it: ranks without rank 0's address, nodes only
// where this application's live containers run, no stderr tail, its events as anonymousEvent.
func anonymousStatus(s contract.Status) contract.Status {
	evs := make([]contract.Event, len(s.Events))
	for i, e := range s.Events {
		evs[i] = anonymousEvent(e)
	}
	if s.Events != nil {
		s.Events = evs
	}
	ours := map[string]bool{}
	cs := make([]contract.ContainerStatus, len(s.Containers))
	s.DriverStderrTail = ""
	for i, c := range s.Containers {
		c.Rank = anonymousRank(c.Rank)
		c.StderrTail = ""
		cs[i] = c
		if c.State != contract.Completed {
			ours[c.Node] = true
		}
	}
	s.Containers = cs
	var nodes []contract.NodeStatus
	for _, n := range s.Nodes {
		if ours[n.Node] {
			nodes = append(nodes, n)
		}
	}
	s.Nodes = nodes
	return s
}

// anonymousRank is r without rank 0's address and port.
func anonymousRank(r *contract.Rendezvous) *contract.Rendezvous {
	if r == nil {
		return nil
	}
	c := *r
	c.MasterAddr, c.MasterPort = "", 0
	return &c
}

// anonymousEvent is e as an anonymous reader sees it: without a worker's stderr tail or its detail.
func anonymousEvent(e contract.Event) contract.Event {
	e.StderrTail, e.Detail = "", ""
	return e
}
