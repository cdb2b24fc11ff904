package am

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
)

// Every attempt names its HTTPS API in the staging directory's extended attribute user.yarn-am.api
// (contract.APIAddressXAttr): TaskExecutors YARN kept from an earlier attempt read it when their posts
// stop getting through, and move to this attempt, still trusting only the application's TLS authority
// (docs/running.md#kept-taskexecutors-find-the-new-attempt). The value is an address, no secret.

// apiPublisher is a staging directory that can hold the address (*staging, *tokenStaging).
type apiPublisher interface {
	PublishAPI(ctx context.Context, data []byte) error
}

// PublishAPI writes the attempt's address document.
func (s *tokenStaging) PublishAPI(ctx context.Context, data []byte) error {
	return s.nn.SetXAttr(ctx, s.dir.Path, contract.APIAddressXAttr, data)
}

// PublishAPI writes the attempt's address document.
func (s *staging) PublishAPI(ctx context.Context, data []byte) error {
	if s.nn == nil {
		return errors.New("the staging directory was opened without a NameNode connection")
	}
	return s.nn.SetXAttr(ctx, s.dir.Path, contract.APIAddressXAttr, data)
}

// publishAPIAddress writes url (https://host:port/) and the attempt into the staging directory. A
// failure is logged: this attempt works, only TaskExecutors kept from an earlier one stay silent (the
// liveness check asks their NodeManagers, docs/running.md#liveness).
func publishAPIAddress(ctx context.Context, staging any, url, attempt string, log logrus.FieldLogger) {
	p, ok := staging.(apiPublisher)
	if !ok {
		return
	}
	data, err := json.Marshal(contract.APIAddress{URL: url, Attempt: attempt})
	if err == nil && len(data) > contract.MaxAPIAddressBytes {
		err = errors.New("the address document is longer than launchers read")
	}
	if err == nil {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = p.PublishAPI(c, data)
		cancel()
	}
	if err != nil {
		log.WithError(err).Warn("am: could not write this attempt's API address into the staging directory; TaskExecutors kept from an earlier attempt will not find it")
		return
	}
	log.WithField("url", url).Info("am: API address written to the staging directory (user." + contract.APIAddressXAttr + ") for TaskExecutors kept across attempts")
}
