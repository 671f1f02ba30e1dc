// Package metrics is the service's Prometheus metrics: the only
// importer of github.com/prometheus/client_golang and prometheus/common.
// The service serves them at GET /metrics behind the operator's token.
//
// Nothing here is sprinkled through the verbs. The counters are driven by
// what the service already does:
//   - the events each store transaction commits (Observe, given to
//     store.Options.Committed): restarts (standing.restarting) and turn
//     durations (<kind>.turn_started → <kind>.turn_ended, a hook's
//     UserPromptSubmit → Stop);
//   - every say's result, whichever surface asked (Standing wraps the
//     standing verbs);
//   - every REST request (ObserveRequest, from the http package's
//     middleware, by route template);
//   - every Slack poll cycle (PollCycle, channels.Poller.Observe).
//
// The session gauges are counted at scrape time from the rows `list`
// gives (the store's records and one tmux query per socket).
//
// The series, all prefixed the_loop_:
//
//	standing_sessions{status,activity}        gauge
//	work_item_sessions{status,activity}       gauge
//	restarts_total{standing}                  counter
//	says_total{outcome}                       counter
//	turn_duration_seconds{kind}               histogram
//	http_request_duration_seconds{method,route,code} histogram (each label bounded)
//	slack_poll_cycles_total{result}           counter
//	slack_poll_errors_total{kind}             counter
//	build_info{version}                       gauge (always 1)
package metrics

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	loop "github.com/the-loop-dev/the-loop"
)

// Namespace prefixes every series.
const Namespace = "the_loop"

// Say outcomes beyond loop.Say*: a say that returned an error (no live
// pane, a bad name…), and one that failed with no outcome of its own (a
// paste tmux refused).
const (
	OutcomeError  = "error"
	OutcomeFailed = "failed"
)

// Poll cycle results and error kinds.
const (
	PollOK      = "ok"      // the cycle read what it had to read
	PollSkipped = "skipped" // Slack disabled, no token, a rate limit in force
	PollFailed  = "failed"  // the cycle ended in an error (the store)

	PollErrorThread = "thread" // a bound thread could not be read
	PollErrorCycle  = "cycle"  // a cycle failed
)

// maxTurns bounds the turns being timed: a turn whose Stop never comes
// (the agent was killed) must not grow the map for ever.
const maxTurns = 4096

// scrapeBound bounds the rows' reading at a scrape.
const scrapeBound = 10 * time.Second

// Rows are where the session gauges are counted from at each scrape.
type Rows struct {
	// Standing gives the standing rows (nil: no standing gauge).
	Standing interface {
		List(ctx context.Context) ([]loop.StandingRow, error)
	}
	// WorkItems gives the work-item rows (nil: no work-item gauge).
	WorkItems interface {
		List(ctx context.Context, status string) ([]loop.WorkItemRow, error)
	}
}

// Metrics holds the service's series, in a registry of its own.
type Metrics struct {
	reg *prometheus.Registry

	restarts   *prometheus.CounterVec
	says       *prometheus.CounterVec
	turns      *prometheus.HistogramVec
	requests   *prometheus.HistogramVec
	pollCycles *prometheus.CounterVec
	pollErrors *prometheus.CounterVec

	mu        sync.Mutex
	turnStart map[string]time.Time // "<kind>\x00<subject>" → its turn_started's ts
	routes    map[string]struct{}  // the route labels handed out (maxRoutes at most)
}

// New builds the series and registers them, with the Go runtime's and the
// process's collectors; version is build_info's label. The session gauges
// come once CountSessions is given their rows.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "restarts_total",
			Help: "Restarts the supervisor scheduled (standing.restarting), by standing session."}, []string{"standing"}),
		says: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "says_total",
			Help: "Messages said to standing sessions, by outcome (queued, submitted, delivered, not-ready, not-submitted, failed, error)."}, []string{"outcome"}),
		turns: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "turn_duration_seconds",
			Help:    "Agent turns from the hook's UserPromptSubmit to its Stop, by kind (standing, session).",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 3600}}, []string{"kind"}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "http_request_duration_seconds",
			Help:    "REST, MCP and dashboard requests the service answered, by method, route template and status code.",
			Buckets: prometheus.DefBuckets}, []string{"method", "route", "code"}),
		pollCycles: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "slack_poll_cycles_total",
			Help: "Slack poll cycles, by result (ok, skipped, failed)."}, []string{"result"}),
		pollErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "slack_poll_errors_total",
			Help: "Slack poll errors, by kind (thread: a bound thread could not be read; cycle: a cycle failed)."}, []string{"kind"}),
		turnStart: map[string]time.Time{},
		routes:    map[string]struct{}{},
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help: "Always 1; its label is the service's version."}, []string{"version"})
	build.WithLabelValues(version).Set(1)
	m.reg.MustRegister(m.restarts, m.says, m.turns, m.requests, m.pollCycles, m.pollErrors, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Zero series for the known labels, so a rate over them starts at 0.
	for _, o := range []string{loop.SayQueued, loop.SaySubmitted, loop.SayDelivered, loop.SayNotReady, loop.SayNotSubmitted, OutcomeFailed, OutcomeError} {
		m.says.WithLabelValues(o)
	}
	for _, r := range []string{PollOK, PollSkipped, PollFailed} {
		m.pollCycles.WithLabelValues(r)
	}
	for _, k := range []string{PollErrorThread, PollErrorCycle} {
		m.pollErrors.WithLabelValues(k)
	}
	return m
}

// CountSessions adds the session gauges, counted from rows at each scrape
// (once: a second call is refused by the registry and panics).
func (m *Metrics) CountSessions(rows Rows) {
	m.reg.MustRegister(newRowsCollector(rows))
}

// Handler serves the registry in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ServeHTTP is Handler's (http.Options.Metrics takes a Metrics as is).
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.Handler().ServeHTTP(w, r) }

// ObserveRequest counts one request the service answered: route is its
// route template ("/api/v1/standing-sessions/one", never the raw path),
// "unmatched" for a path no route has. Every label is bounded, whatever
// a client sends: a method outside HTTP's own is "other", as is a route
// past the first maxRoutes seen, and a status outside 100..599.
func (m *Metrics) ObserveRequest(method, route string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(methodLabel(method), m.routeLabel(route), codeLabel(status)).Observe(elapsed.Seconds())
}

// LabelOther is the label of a method, route or status code beyond the
// bounded set each label keeps.
const LabelOther = "other"

// maxRoutes bounds the route label's values: the service registers far
// fewer templates.
const maxRoutes = 256

// methodLabel is method when HTTP defines it, else LabelOther.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return LabelOther
}

// codeLabel is status as a number when it is one HTTP has, else LabelOther.
func codeLabel(status int) string {
	if status < 100 || status > 599 {
		return LabelOther
	}
	return strconv.Itoa(status)
}

// routeLabel is route, "unmatched" for "", or LabelOther once maxRoutes
// others have been seen.
func (m *Metrics) routeLabel(route string) string {
	if route == "" {
		return "unmatched"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.routes[route]; ok {
		return route
	}
	if len(m.routes) >= maxRoutes {
		return LabelOther
	}
	m.routes[route] = struct{}{}
	return route
}

// PollCycle counts one Slack poll cycle: skipped says why it did nothing
// ("" when it ran), threadErrors how many threads could not be read, err
// the cycle's failure.
func (m *Metrics) PollCycle(skipped string, threadErrors int, err error) {
	switch {
	case err != nil:
		m.pollCycles.WithLabelValues(PollFailed).Inc()
		m.pollErrors.WithLabelValues(PollErrorCycle).Inc()
	case skipped != "":
		m.pollCycles.WithLabelValues(PollSkipped).Inc()
	default:
		m.pollCycles.WithLabelValues(PollOK).Inc()
	}
	if threadErrors > 0 {
		m.pollErrors.WithLabelValues(PollErrorThread).Add(float64(threadErrors))
	}
}

// Observe counts from the events one transaction committed (give it to
// store.Options.Committed).
func (m *Metrics) Observe(evs []loop.Event) {
	for i := range evs {
		ev := &evs[i]
		kind, what, ok := strings.Cut(ev.Event, ".")
		if !ok {
			continue
		}
		switch {
		case ev.Event == "standing.restarting":
			m.restarts.WithLabelValues(field(ev, "standing")).Inc()
		case what == "turn_started":
			m.turnStarted(kind, ev)
		case what == "turn_ended":
			m.turnEnded(kind, ev)
		case what == "exited" || what == "stopped" || what == "closed" || what == "deleted":
			m.mu.Lock()
			delete(m.turnStart, turnKey(kind, ev))
			m.mu.Unlock()
		}
	}
}

// turnKey names the session a turn event is about: its standing name or
// its work item.
func turnKey(kind string, ev *loop.Event) string {
	subject := field(ev, "standing")
	if subject == "" {
		subject = field(ev, "work_item")
	}
	return kind + "\x00" + subject
}

func (m *Metrics) turnStarted(kind string, ev *loop.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.turnStart) >= maxTurns {
		// The oldest turn is dropped: its Stop never came.
		oldest := slices.MinFunc(slices.Collect(maps.Keys(m.turnStart)), func(a, b string) int { return m.turnStart[a].Compare(m.turnStart[b]) })
		delete(m.turnStart, oldest)
	}
	m.turnStart[turnKey(kind, ev)] = ev.TS
}

func (m *Metrics) turnEnded(kind string, ev *loop.Event) {
	key := turnKey(kind, ev)
	m.mu.Lock()
	began, ok := m.turnStart[key]
	delete(m.turnStart, key)
	m.mu.Unlock()
	if ok && !ev.TS.Before(began) {
		m.turns.WithLabelValues(kind).Observe(ev.TS.Sub(began).Seconds())
	}
}

// field is ev's string field key ("" when absent).
func field(ev *loop.Event, key string) string {
	s, _ := ev.Field(key).(string)
	return s
}

// Standing wraps standing verbs so that every say's outcome is counted,
// whichever surface (REST, MCP, Slack) asked.
func (m *Metrics) Standing(v loop.StandingService) loop.StandingService {
	return countedSays{StandingService: v, says: m.says}
}

// countedSays counts the outcome of each Say.
type countedSays struct {
	loop.StandingService
	says *prometheus.CounterVec
}

// Say says, then counts its outcome.
func (c countedSays) Say(ctx context.Context, req loop.StandingSayRequest) (loop.SayResult, error) {
	res, err := c.StandingService.Say(ctx, req)
	outcome := res.Outcome
	switch {
	case err != nil:
		outcome = OutcomeError
	case outcome == "":
		outcome = OutcomeFailed
	}
	c.says.WithLabelValues(outcome).Inc()
	return res, err
}

// rowsCollector counts the sessions by status and activity at each scrape.
type rowsCollector struct {
	opt                    Rows
	standingDesc, workDesc *prometheus.Desc
}

func newRowsCollector(opt Rows) *rowsCollector {
	return &rowsCollector{opt: opt,
		standingDesc: prometheus.NewDesc(Namespace+"_standing_sessions",
			"Standing sessions (declared or recorded), by status and activity, at the scrape.", []string{"status", "activity"}, nil),
		workDesc: prometheus.NewDesc(Namespace+"_work_item_sessions",
			"Work-item sessions (closed ones included), by status and activity, at the scrape.", []string{"status", "activity"}, nil),
	}
}

// Describe sends the gauges' descriptions.
func (rc *rowsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- rc.standingDesc
	ch <- rc.workDesc
}

// Collect reads the rows and sends one gauge per (status, activity) seen;
// a failed read is reported to the scraper (promhttp's ContinueOnError
// still serves the other series).
func (rc *rowsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeBound)
	defer cancel()
	if rc.opt.Standing != nil {
		rows, err := rc.opt.Standing.List(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(rc.standingDesc, err)
		} else {
			counts := map[[2]string]int{}
			for _, r := range rows {
				counts[[2]string{string(r.Status), string(r.Activity)}]++
			}
			send(ch, rc.standingDesc, counts)
		}
	}
	if rc.opt.WorkItems != nil {
		rows, err := rc.opt.WorkItems.List(ctx, "")
		if err != nil {
			ch <- prometheus.NewInvalidMetric(rc.workDesc, err)
		} else {
			counts := map[[2]string]int{}
			for _, r := range rows {
				counts[[2]string{string(r.Status), string(r.Activity)}]++
			}
			send(ch, rc.workDesc, counts)
		}
	}
}

func send(ch chan<- prometheus.Metric, desc *prometheus.Desc, counts map[[2]string]int) {
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}

// Sample is one series' value in a scrape: its name, its labels and its
// value (a histogram's _count and _sum are samples of their own).
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Parse reads a scrape in Prometheus's text format with Prometheus's own
// parser (expfmt), as a Prometheus server would: the samples, or the
// parser's error. Tests and tools read /metrics with it.
func Parse(r io.Reader) ([]Sample, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	var out []Sample
	for name, fam := range families {
		for _, mt := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case mt.Counter != nil:
				out = append(out, Sample{name, labels, mt.GetCounter().GetValue()})
			case mt.Gauge != nil:
				out = append(out, Sample{name, labels, mt.GetGauge().GetValue()})
			case mt.Histogram != nil:
				out = append(out, Sample{name + "_count", labels, float64(mt.GetHistogram().GetSampleCount())},
					Sample{name + "_sum", labels, mt.GetHistogram().GetSampleSum()})
			case mt.Untyped != nil:
				out = append(out, Sample{name, labels, mt.GetUntyped().GetValue()})
			case mt.Summary != nil:
				out = append(out, Sample{name + "_count", labels, float64(mt.GetSummary().GetSampleCount())})
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("metrics: the scrape holds no sample")
	}
	return out, nil
}

// Sum adds the values of the samples named name whose labels include
// every pair of want (a nil want: all of them).
func Sum(samples []Sample, name string, want map[string]string) float64 {
	var sum float64
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		match := true
		for k, v := range want {
			if s.Labels[k] != v {
				match = false
				break
			}
		}
		if match {
			sum += s.Value
		}
	}
	return sum
}
