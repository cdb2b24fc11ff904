// Package gpuuse is the AM's book of its TaskExecutors' GPU utilisation (docs/running.md#gpu-utilisation):
// the samples their launchers send with each liveness message, checked (only the GPUs a container's
// launcher reported, values in range, a bounded count) and kept per container in a ring of the last
// SeriesLen samples; a mean, an idle share and the latest reading per GPU over the container's whole
// life; the idle-gpu warning (one per idle spell of a GPU, re-armed when it is busy again); and the job's
// totals for the status and the finished event.
//
// It has no clock and no lock of its own: the AM calls it under its mutex with the time of its own
// clock, so tests drive it with a fake one (book_test.go).
package gpuuse
