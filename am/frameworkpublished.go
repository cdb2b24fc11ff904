package am

import (
	"maps"
	"sync"

	"github.com/sirupsen/logrus"
)

// publishedValues is what the job's framework published for its TaskExecutors
// (framework.AMStart.Publish), which the HTTPS API serves with the secret
// (contract.FrameworkPublishedPath).
type publishedValues struct {
	mu     sync.Mutex
	values map[string]string
}

func (p *publishedValues) set(name, value string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.values == nil {
		p.values = map[string]string{}
	}
	p.values[name] = value
	logrus.WithFields(logrus.Fields{"name": name, "value": value}).Info("yarn-am am: the framework published a value for its TaskExecutors")
}

func (p *publishedValues) get() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.values)
}
