package e2e_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDockerRoute checks, by reading them, what the Docker route relies on:
// there is no Docker engine in CI to build or run them. docker-compose.yml
// runs Neo4j 5.26 community with a volume and a healthcheck, and starts
// membrane only once Neo4j is healthy, wired to it, with a healthcheck of
// its own (the binary probing /readyz: the image has no shell or curl);
// the Dockerfile is multi-stage, builds a static binary and runs it as a
// non-root user; .dockerignore keeps local data and build output out of
// the build context.
func TestDockerRoute(t *testing.T) {
	t.Run("compose", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Services map[string]struct {
				Image       string            `yaml:"image"`
				Build       any               `yaml:"build"`
				Environment map[string]string `yaml:"environment"`
				Ports       []string          `yaml:"ports"`
				Volumes     []string          `yaml:"volumes"`
				Healthcheck *struct {
					Test     []string `yaml:"test"`
					Interval string   `yaml:"interval"`
					Retries  int      `yaml:"retries"`
				} `yaml:"healthcheck"`
				DependsOn map[string]struct {
					Condition string `yaml:"condition"`
				} `yaml:"depends_on"`
			} `yaml:"services"`
			Volumes map[string]any `yaml:"volumes"`
		}
		if err := yaml.Unmarshal(b, &c); err != nil {
			t.Fatalf("docker-compose.yml: %v", err)
		}
		neo, ok := c.Services["neo4j"]
		if !ok {
			t.Fatal("no neo4j service")
		}
		if neo.Image != "neo4j:5.26-community" {
			t.Errorf("neo4j image %q, want neo4j:5.26-community", neo.Image)
		}
		if h := neo.Healthcheck; h == nil || len(h.Test) == 0 || !strings.Contains(strings.Join(h.Test, " "), "RETURN 1") || h.Retries == 0 {
			t.Errorf("neo4j healthcheck %+v: want a query (RETURN 1) with retries", h)
		}
		dataVolume := false
		for _, v := range neo.Volumes {
			name, target, _ := strings.Cut(v, ":")
			if _, named := c.Volumes[name]; named && strings.HasPrefix(target, "/data") {
				dataVolume = true
			}
		}
		if !dataVolume {
			t.Errorf("neo4j volumes %v: want a named volume (declared under volumes:) on /data", neo.Volumes)
		}
		if neo.Environment["NEO4J_AUTH"] == "" {
			t.Error("neo4j: NEO4J_AUTH unset (the image then requires a password change at first login)")
		}

		m, ok := c.Services["membrane"]
		if !ok {
			t.Fatal("no membrane service")
		}
		if m.Build == nil {
			t.Error("membrane is not built from the Dockerfile (build:)")
		}
		if cond := m.DependsOn["neo4j"].Condition; cond != "service_healthy" {
			t.Errorf("membrane depends_on neo4j condition %q, want service_healthy", cond)
		}
		if uri := m.Environment["NEO4J_URI"]; uri != "bolt://neo4j:7687" && uri != "neo4j://neo4j:7687" {
			t.Errorf("membrane NEO4J_URI %q, want the neo4j service on 7687", uri)
		}
		// Inside a container 127.0.0.1 is unreachable from the host.
		if l := m.Environment["MEMBRANE_LISTEN"]; !strings.HasPrefix(l, "0.0.0.0:") {
			t.Errorf("membrane MEMBRANE_LISTEN %q, want 0.0.0.0:<port>", l)
		}
		if !slices.ContainsFunc(m.Ports, func(p string) bool { return strings.HasSuffix(p, ":8080") }) {
			t.Errorf("membrane ports %v: want 8080 published", m.Ports)
		}
		// The image is distroless: the probe is the binary's own
		// healthcheck subcommand (exec form, no shell), asking the port the
		// server listens on for readiness.
		_, port, _ := strings.Cut(m.Environment["MEMBRANE_LISTEN"], ":")
		wantProbe := []string{"CMD", "/membrane", "healthcheck", "-url", "http://127.0.0.1:" + port + "/readyz"}
		if h := m.Healthcheck; h == nil || !slices.Equal(h.Test, wantProbe) || h.Retries == 0 || h.Interval == "" {
			t.Errorf("membrane healthcheck %+v: want test %q with an interval and retries", h, wantProbe)
		}
	})

	t.Run("Dockerfile", func(t *testing.T) {
		f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// Instructions by stage; continuation lines are joined.
		var stages [][]string
		var base []string
		sc := bufio.NewScanner(f)
		line := ""
		for sc.Scan() {
			l := strings.TrimSpace(sc.Text())
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if strings.HasSuffix(l, `\`) {
				line += strings.TrimSuffix(l, `\`) + " "
				continue
			}
			line += l
			if fields := strings.Fields(line); strings.EqualFold(fields[0], "FROM") {
				stages = append(stages, nil)
				base = append(base, fields[1])
			} else if len(stages) > 0 {
				stages[len(stages)-1] = append(stages[len(stages)-1], line)
			}
			line = ""
		}
		if len(stages) < 2 {
			t.Fatalf("%d stages, want a multi-stage build", len(stages))
		}
		final, finalBase := stages[len(stages)-1], base[len(base)-1]
		if strings.Contains(finalBase, "golang") {
			t.Errorf("final stage FROM %s: want a small runtime image, not the Go toolchain", finalBase)
		}
		has := func(instrs []string, prefix string) (string, bool) {
			for _, in := range instrs {
				if strings.HasPrefix(strings.ToUpper(in), prefix) {
					return in, true
				}
			}
			return "", false
		}
		user, ok := has(final, "USER ")
		if !ok {
			t.Error("final stage has no USER: the server would run as root")
		} else if u := strings.Fields(user)[1]; u == "root" || u == "0" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root:") {
			t.Errorf("final stage %q: want a non-root user", user)
		}
		if _, ok := has(final, "COPY --FROM="); !ok {
			t.Error("final stage copies nothing from the build stage")
		}
		if _, ok := has(final, "ENTRYPOINT"); !ok {
			t.Error("final stage has no ENTRYPOINT")
		}
		// distroless/static has no libc: the binary must be static.
		if build, _ := has(stages[0], "RUN CGO_ENABLED=0"); build == "" && strings.Contains(finalBase, "static") {
			t.Error("the build stage does not build with CGO_ENABLED=0, but the final image has no libc")
		}
	})

	t.Run("dockerignore", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
		if err != nil {
			t.Fatal(err)
		}
		// Local Neo4j data (and the dev encryption key kept beside it) must
		// not be sent to the Docker daemon as build context, nor local
		// binaries (scripts/run.sh builds into bin/), which the image
		// builds itself.
		for _, want := range []string{".neo4j", ".git", "bin"} {
			if !slices.ContainsFunc(strings.Fields(string(b)), func(l string) bool { return strings.Trim(l, "/") == want }) {
				t.Errorf(".dockerignore does not exclude %s", want)
			}
		}
	})
}
