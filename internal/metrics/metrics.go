// Package metrics defines every Prometheus metric Membrane exports, on a
// registry of its own (not the global default, so tests and embedders get
// exactly these series). It imports no database driver: the store and the
// job runner report through small observer interfaces that *Metrics
// satisfies. Every method is safe on a nil *Metrics, which records nothing.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Label values that stand for many.
const (
	// Anonymous names operations sent without a name.
	Anonymous = "anonymous"
	// Other names every operation beyond the first MaxOperationNames
	// distinct names, and names that are not GraphQL names.
	Other = "other"
)

// MaxOperationNames bounds the distinct operation names used as label
// values. Operation names are chosen by clients; without a bound a client
// could create one time series per request.
const MaxOperationNames = 200

// maxNameLength bounds one operation name used as a label value.
const maxNameLength = 64

// Metrics holds Membrane's metrics and the registry they are exported from.
type Metrics struct {
	reg *prometheus.Registry

	operations     *prometheus.CounterVec
	operationTime  *prometheus.HistogramVec
	graphqlErrors  *prometheus.CounterVec
	subscriptions  *prometheus.GaugeVec
	httpResponses  *prometheus.CounterVec
	txTime         *prometheus.HistogramVec
	txRetries      *prometheus.CounterVec
	txErrors       *prometheus.CounterVec
	jobRuns        *prometheus.CounterVec
	jobRunDuration *prometheus.HistogramVec
	panics         *prometheus.CounterVec
	unreadable     prometheus.Gauge

	mu    sync.Mutex
	names map[string]struct{}
}

// New returns metrics registered on a fresh registry, together with the Go
// runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg:   prometheus.NewRegistry(),
		names: map[string]struct{}{},
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "membrane_graphql_operations_total",
			Help: "GraphQL operations handled, by operation name and type (query, mutation, subscription; unknown when the request was refused before its operation was known).",
		}, []string{"operation", "type"}),
		operationTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "membrane_graphql_operation_duration_seconds",
			Help:    "Time from the start of a GraphQL request to its response (subscriptions: to their first response), by operation name and type.",
			Buckets: prometheus.DefBuckets,
		}, []string{"operation", "type"}),
		graphqlErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "membrane_graphql_errors_total",
			Help: "GraphQL errors returned to clients, by extensions.code.",
		}, []string{"code"}),
		subscriptions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "membrane_graphql_subscriptions_active",
			Help: "Subscriptions currently open, by kind (the subscription field).",
		}, []string{"kind"}),
		httpResponses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "membrane_http_responses_total",
			Help: "HTTP responses, by route and status code.",
		}, []string{"handler", "code"}),
		txTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "membrane_neo4j_transaction_duration_seconds",
			Help:    "Neo4j transactions, retries included, by mode (read, write, autocommit).",
			Buckets: prometheus.DefBuckets,
		}, []string{"mode"}),
		txRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "membrane_neo4j_transaction_retries_total",
			Help: "Extra attempts of managed Neo4j transactions (the driver retried transient failures), by mode.",
		}, []string{"mode"}),
		txErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "membrane_neo4j_transaction_errors_total",
			Help: "Neo4j transactions that failed, by mode and mapped error code.",
		}, []string{"mode", "code"}),
		jobRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "membrane_job_runs_total",
			Help: "Maintenance job runs, by job and outcome (succeeded, failed, timeout, canceled, skipped).",
		}, []string{"job", "outcome"}),
		jobRunDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "membrane_job_run_duration_seconds",
			Help:    "Duration of maintenance job runs, by job and outcome.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 12), // 10ms to about 12 days
		}, []string{"job", "outcome"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "membrane_panics_recovered_total",
			Help: "Panics recovered (the process went on), by where: a goroutine's name, or resolver.",
		}, []string{"where"}),
		unreadable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "membrane_records_unreadable",
			Help: "Sealed records this server cannot open (sealed under a key it does not hold, or that fails authentication), counted at start: shown redacted by record reads, left out of retrieve, left as they are by start-up migrations (see docs/operations.md, Unknown keys).",
		}),
	}
	m.reg.MustRegister(m.panics, m.unreadable, m.operations, m.operationTime, m.graphqlErrors, m.subscriptions, m.httpResponses,
		m.txTime, m.txRetries, m.txErrors, m.jobRuns, m.jobRunDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// OperationLabel returns the label value for a GraphQL operation name:
// Anonymous for "", the name itself for the first MaxOperationNames
// distinct valid names, Other for the rest.
func (m *Metrics) OperationLabel(name string) string {
	if name == "" {
		return Anonymous
	}
	if m == nil || !validName(name) {
		return Other
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.names[name]; ok {
		return name
	}
	if len(m.names) >= MaxOperationNames {
		return Other
	}
	m.names[name] = struct{}{}
	return name
}

// validName reports whether s is a GraphQL name of at most maxNameLength
// bytes. Names from a parsed document always are; the operationName of a
// request that failed to parse may be anything.
func validName(s string) bool {
	if len(s) > maxNameLength {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// GraphQLOperation records one handled operation; operation is a label
// from OperationLabel.
func (m *Metrics) GraphQLOperation(operation, typ string, took time.Duration) {
	if m == nil {
		return
	}
	m.operations.WithLabelValues(operation, typ).Inc()
	m.operationTime.WithLabelValues(operation, typ).Observe(took.Seconds())
}

// GraphQLError records one error returned to a client.
func (m *Metrics) GraphQLError(code string) {
	if m == nil {
		return
	}
	m.graphqlErrors.WithLabelValues(code).Inc()
}

// PanicRecovered counts one recovered panic; where is a fixed name (a
// goroutine's, or "resolver"), never request data.
func (m *Metrics) PanicRecovered(where string) {
	if m == nil {
		return
	}
	m.panics.WithLabelValues(where).Inc()
}

// RecordsUnreadable sets how many sealed records this server cannot open
// (counted by the store at start).
func (m *Metrics) RecordsUnreadable(n int) {
	if m == nil {
		return
	}
	m.unreadable.Set(float64(n))
}

// SubscriptionStarted counts one open subscription of kind and returns the
// function to call, once, when it ends; further calls do nothing.
func (m *Metrics) SubscriptionStarted(kind string) (ended func()) {
	if m == nil {
		return func() {}
	}
	g := m.subscriptions.WithLabelValues(kind)
	g.Inc()
	var once sync.Once
	return func() { once.Do(g.Dec) }
}

// HTTPResponse records one response of the route handler (a fixed set of
// names, never the raw path).
func (m *Metrics) HTTPResponse(handler string, status int) {
	if m == nil {
		return
	}
	m.httpResponses.WithLabelValues(handler, strconv.Itoa(status)).Inc()
}

// Transaction records one Neo4j transaction of mode (read, write,
// autocommit). It implements the store's observer: ended gets the number of
// times the transaction's work ran (more than one means retries) and the
// mapped error's code ("" for success).
func (m *Metrics) Transaction(ctx context.Context, mode string) (context.Context, func(attempts int, code string)) {
	if m == nil {
		return ctx, func(int, string) {}
	}
	start := time.Now()
	return ctx, func(attempts int, code string) {
		m.txTime.WithLabelValues(mode).Observe(time.Since(start).Seconds())
		if attempts > 1 {
			m.txRetries.WithLabelValues(mode).Add(float64(attempts - 1))
		}
		if code != "" {
			m.txErrors.WithLabelValues(mode, code).Inc()
		}
	}
}

// JobRun records one job run. It implements the job runner's observer:
// ended gets the run's outcome.
func (m *Metrics) JobRun(ctx context.Context, job string) (context.Context, func(outcome string)) {
	if m == nil {
		return ctx, func(string) {}
	}
	start := time.Now()
	return ctx, func(outcome string) {
		m.jobRuns.WithLabelValues(job, outcome).Inc()
		m.jobRunDuration.WithLabelValues(job, outcome).Observe(time.Since(start).Seconds())
	}
}
