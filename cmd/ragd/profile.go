package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfile starts a Go CPU profile written to path, for the evals' --cpu-profile; "" profiles
// nothing. The returned stop ends the profile and closes the file.
func cpuProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
