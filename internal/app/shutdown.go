package app

import (
	"context"
	"fmt"
	"time"

	"github.com/membrane/membrane/internal/safego"
)

// flushTimeout is the time of its own that what follows the drain gets
// (metrics listener, trace exporter): after a drain that ran out of time
// the shutdown timeout has passed, and the last requests' spans matter
// most then.
const flushTimeout = 5 * time.Second

// shutdown stops the server gracefully, logging each step: it stops
// accepting connections, ends the subscriptions and drains the requests in
// flight while the jobs stop, then stops the change feed and closes the
// metrics listener, the Neo4j driver and the trace exporter. Jobs stop
// during the drain, not after it: a runJob request waits for its run,
// which only Stop cancels (every job is idempotent; the next run finishes
// the work).
func (m *Main) shutdown() error {
	timeout := m.cfg.ShutdownTimeout
	m.log.Info("shutting down", "timeout", timeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	failed := m.drain(ctx)
	flushCtx, cancelFlush := context.WithTimeout(context.Background(), flushTimeout)
	defer cancelFlush()
	if m.metricsSrv != nil {
		m.closeMetrics(flushCtx)
	}
	if m.endFeed != nil {
		m.endFeed()
	}
	m.closeServices(context.Background())
	m.closeStore()
	m.closeTracing(flushCtx)
	if failed != nil {
		return fmt.Errorf("shutdown: %w", failed)
	}
	m.log.Info("shutdown complete")
	return nil
}

// drain closes the listener, stops the jobs while the requests in flight
// finish, and cuts off those still running when ctx ends (returning why).
func (m *Main) drain(ctx context.Context) error {
	drained := make(chan error, 1)
	safego.GoErr("shutdown", drained, func() error { return m.srv.Shutdown(ctx) })
	// Shutdown closes its listeners, then runs the hook that closes
	// draining (and logs so) in a goroutine of its own: wait for it, so
	// that the steps are logged in order.
	select {
	case <-m.draining:
	case <-ctx.Done():
	}
	if !m.serving {
		// Shutdown only closes the listeners it serves.
		_ = m.ln.Close()
	}
	if err := m.runner.Stop(ctx); err != nil {
		m.log.Error("shutdown: jobs", "err", err)
	} else {
		m.log.Info("shutdown: jobs stopped")
	}
	if err := <-drained; err != nil {
		// Requests still running at the deadline are cut off.
		m.log.Error("shutdown: requests still in flight at the deadline; closing their connections", "err", err)
		_ = m.srv.Close()
		return err
	}
	m.log.Info("shutdown: requests drained")
	return nil
}

// closeMetrics shuts the metrics server down, closing it when that takes
// longer than ctx.
func (m *Main) closeMetrics(ctx context.Context) {
	if !m.serving {
		_ = m.metricsLn.Close()
	}
	if err := m.metricsSrv.Shutdown(ctx); err != nil {
		_ = m.metricsSrv.Close()
	}
}

// closeTracing sends the spans of the last requests, still batched, and
// closes the exporter.
func (m *Main) closeTracing(ctx context.Context) {
	if m.tp == nil {
		return
	}
	if err := m.tp.Shutdown(ctx); err != nil {
		m.log.Error("shutdown: trace exporter", "err", err)
	} else {
		m.log.Info("shutdown: trace exporter closed")
	}
}
