// Command worker is the example TaskExecutor of yarn-am's tests and README: it prints the GPU indexes
// it was given, read the three ways a worker can (the external-resources.json file through the Go
// worker API, the per-resource variable, CUDA_VISIBLE_DEVICES), e.g.
//
//	worker: gpu indexes from file=0,1 env=0,1 CUDA_VISIBLE_DEVICES=0,1
//
// Flags: --resource NAME (default gpu), --marker FILE (created at start, so tests can prove the worker
// never started), --sleep D (wait D before exiting; SIGTERM/SIGINT/SIGHUP end the wait: the worker
// prints which signal and exits 128+N), --exit N (exit code, default 0), --rendezvous (a rank of a
// gang: rank 0 listens on MASTER_ADDR:MASTER_PORT and checks that every other rank connects exactly
// once; rendezvous.go), --notice (catch SIGUSR1, the preemption warning's signal, and print the
// notice file $YARN_AM_PREEMPTION_FILE on one line: "worker: notice SIGUSR1 {...}"; the wait goes on).
//
// Build: go build -o worker ./testdata/worker
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

func main() {
	name := flag.String("resource", "gpu", "the external resource to print")
	marker := flag.String("marker", "", "create this file at start")
	sleep := flag.Duration("sleep", 0, "wait this long before exiting (a signal ends the wait)")
	exit := flag.Int("exit", 0, "exit code")
	rdv := flag.Bool("rendezvous", false, "meet the other ranks of the gang (rank 0 listens on MASTER_ADDR:MASTER_PORT)")
	notice := flag.Bool("notice", false, "catch SIGUSR1 and print the preemption notice file")
	flag.Parse()
	if *notice {
		printNotices()
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	if *marker != "" {
		if err := os.WriteFile(*marker, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "worker: %v\n", err)
			os.Exit(1)
		}
	}
	var fromFile []string
	infos, err := resources.ExternalResourceInfos(*name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		os.Exit(1)
	}
	for _, in := range infos {
		v, _ := in.Property(contract.InfoIndex)
		fromFile = append(fromFile, v)
	}
	fmt.Printf("worker: %s indexes from file=%s env=%s CUDA_VISIBLE_DEVICES=%s\n", *name,
		strings.Join(fromFile, ","), os.Getenv(resources.EnvResourceVar(*name)), os.Getenv(contract.EnvCUDAVisibleDevices))

	if *rdv {
		if err := rendezvous(2 * time.Minute); err != nil {
			fmt.Fprintf(os.Stderr, "worker: %v\n", err)
			fmt.Printf("worker: rendezvous failed: %v\n", err)
			os.Exit(1)
		}
	}
	if *sleep > 0 {
		select {
		case s := <-sigs:
			fmt.Printf("worker: received %s\n", s)
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-time.After(*sleep):
		}
	}
	os.Exit(*exit)
}

// printNotices catches SIGUSR1 (docs/running.md#preemption: the launcher signals only a process that
// catches it) and prints the notice file beside each signal, on one line.
func printNotices() {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			b, err := os.ReadFile(os.Getenv(contract.EnvPreemptionFile))
			if err != nil {
				fmt.Printf("worker: notice SIGUSR1 unreadable: %v\n", err)
				continue
			}
			fmt.Printf("worker: notice SIGUSR1 %s\n", strings.Join(strings.Fields(string(b)), " "))
		}
	}()
}
