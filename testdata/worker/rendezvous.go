package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// rendezvous is the worker's --rendezvous mode, a small TCP store like the one torch.distributed
// starts on rank 0: rank 0 listens on MASTER_ADDR:MASTER_PORT and expects every other rank to connect
// and send its rank exactly once; the others connect (retrying while rank 0 starts) and send theirs.
// It prints what it sees and returns an error when the gang is not what the environment says.
func rendezvous(timeout time.Duration) error {
	rank, err1 := strconv.Atoi(os.Getenv("RANK"))
	world, err2 := strconv.Atoi(os.Getenv("WORLD_SIZE"))
	local, err3 := strconv.Atoi(os.Getenv("LOCAL_RANK"))
	if err1 != nil || err2 != nil || err3 != nil {
		return fmt.Errorf("RANK=%q WORLD_SIZE=%q LOCAL_RANK=%q are not numbers", os.Getenv("RANK"), os.Getenv("WORLD_SIZE"), os.Getenv("LOCAL_RANK"))
	}
	addr := net.JoinHostPort(os.Getenv("MASTER_ADDR"), os.Getenv("MASTER_PORT"))
	fmt.Printf("worker: rank %d of %d local %d round %s master %s\n", rank, world, local, os.Getenv(contract.EnvRound), addr)
	deadline := time.Now().Add(timeout)
	if rank == 0 {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("rank 0 cannot listen on MASTER_ADDR:MASTER_PORT = %s: %w", addr, err)
		}
		defer l.Close()
		seen := map[int]int{}
		for n := 1; n < world; n++ {
			_ = l.(*net.TCPListener).SetDeadline(deadline)
			c, err := l.Accept()
			if err != nil {
				return fmt.Errorf("rank 0 saw %d of the %d other ranks: %w", n-1, world-1, err)
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			r, err := strconv.Atoi(strings.TrimSpace(line))
			if err == nil {
				seen[r]++
				fmt.Fprintln(c, "ok")
			}
			c.Close()
		}
		var ranks []string
		for r := 1; r < world; r++ {
			if seen[r] != 1 {
				return fmt.Errorf("rank 0 saw rank %d %d times (want once): %v", r, seen[r], seen)
			}
			ranks = append(ranks, strconv.Itoa(r))
		}
		if len(seen) != world-1 {
			return fmt.Errorf("rank 0 saw unexpected ranks: %v", seen)
		}
		sort.Strings(ranks)
		fmt.Printf("worker: rank 0 saw ranks %s exactly once\n", strings.Join(ranks, ","))
		return nil
	}
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			fmt.Fprintln(c, rank)
			reply, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.TrimSpace(reply) == "ok" {
				fmt.Printf("worker: rank %d reached rank 0\n", rank)
				return nil
			}
			err = fmt.Errorf("rank 0 answered %q", reply)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("rank %d could not reach rank 0 at %s: %w", rank, addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
