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
		// Built (neo4j:5.26-community plus the embedding plugin; the
		// Dockerfile's own subtest checks it), from the repository root,
		// which holds the plugin's sources. Not tagged with the official
		// image's name, which a build would overwrite.
		build, _ := neo.Build.(map[string]any)
		if build["dockerfile"] != "docker/neo4j.Dockerfile" || (build["context"] != "." && build["context"] != "./") {
			t.Errorf("neo4j build %v: want context . and dockerfile docker/neo4j.Dockerfile", neo.Build)
		}
		if strings.HasPrefix(neo.Image, "neo4j:") {
			t.Errorf("neo4j image %q: a build would overwrite the official image's tag", neo.Image)
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
		stages, base := dockerStages(t, "Dockerfile")
		if len(stages) < 2 {
			t.Fatalf("%d stages, want a multi-stage build", len(stages))
		}
		final, finalBase := stages[len(stages)-1], base[len(base)-1]
		if strings.Contains(finalBase, "golang") {
			t.Errorf("final stage FROM %s: want a small runtime image, not the Go toolchain", finalBase)
		}
		user, ok := instruction(final, "USER ")
		if !ok {
			t.Error("final stage has no USER: the server would run as root")
		} else if u := strings.Fields(user)[1]; u == "root" || u == "0" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root:") {
			t.Errorf("final stage %q: want a non-root user", user)
		}
		if _, ok := instruction(final, "COPY --FROM="); !ok {
			t.Error("final stage copies nothing from the build stage")
		}
		if _, ok := instruction(final, "ENTRYPOINT"); !ok {
			t.Error("final stage has no ENTRYPOINT")
		}
		// distroless/static has no libc: the binary must be static.
		if build, _ := instruction(stages[0], "RUN CGO_ENABLED=0"); build == "" && strings.Contains(finalBase, "static") {
			t.Error("the build stage does not build with CGO_ENABLED=0, but the final image has no libc")
		}
	})

	// docker/neo4j.Dockerfile: the official Neo4j image of the launcher's
	// minor version with the embedding plugin, built by Maven in a stage of
	// its own from tools/neo4j-embed, in the image's plugin directory.
	t.Run("neo4j Dockerfile", func(t *testing.T) {
		stages, base := dockerStages(t, "docker/neo4j.Dockerfile")
		if len(stages) < 2 {
			t.Fatalf("%d stages, want a build stage and the image", len(stages))
		}
		if b := base[0]; !strings.HasPrefix(b, "maven:") || !strings.Contains(b, "temurin-17") {
			t.Errorf("build stage FROM %s: want maven:3-eclipse-temurin-17 (the plugin is Java 17)", b)
		}
		if _, ok := instruction(stages[0], "COPY TOOLS/NEO4J-EMBED/SRC"); !ok {
			t.Error("the build stage does not copy tools/neo4j-embed's sources")
		}
		if run, _ := instruction(stages[0], "RUN "); !strings.Contains(run, "mvn") || !strings.Contains(run, "package") {
			t.Errorf("the build stage runs %q: want mvn ... package", run)
		}
		final, finalBase := stages[len(stages)-1], base[len(base)-1]
		if finalBase != "neo4j:5.26-community" {
			t.Errorf("final stage FROM %s, want neo4j:5.26-community", finalBase)
		}
		copyJar, _ := instruction(final, "COPY --FROM=")
		if f := strings.Fields(copyJar); len(f) != 4 || !strings.HasSuffix(f[2], "/target/plugins/membrane-neo4j-embed.jar") || strings.TrimSuffix(f[3], "/") != "/plugins" {
			t.Errorf("final stage %q: want the shaded jar (target/plugins/membrane-neo4j-embed.jar) copied into /plugins/", copyJar)
		}
		pom, err := os.ReadFile(filepath.Join(repoRoot, "tools/neo4j-embed/pom.xml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(pom), "${project.build.directory}/plugins/membrane-neo4j-embed.jar</outputFile>") {
			t.Error("tools/neo4j-embed/pom.xml does not shade into target/plugins/membrane-neo4j-embed.jar, which the image copies")
		}
		// The plugin compiles against the launcher's Neo4j, of the image's minor version.
		launcher, err := os.ReadFile(filepath.Join(repoRoot, "tools/neo4j-launcher/pom.xml"))
		if err != nil {
			t.Fatal(err)
		}
		version := func(pom []byte) string {
			_, v, _ := strings.Cut(string(pom), "<neo4j.version>")
			v, _, _ = strings.Cut(v, "<")
			return v
		}
		if v, lv := version(pom), version(launcher); v != lv || !strings.HasPrefix(v, "5.26.") {
			t.Errorf("plugin compiled against Neo4j %q, the launcher runs %q and the image 5.26", v, lv)
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
		// Nor the plugins' build output (the neo4j image builds its own).
		for _, want := range []string{".neo4j", ".git", "bin", "tools/neo4j-embed/target"} {
			if !slices.ContainsFunc(strings.Fields(string(b)), func(l string) bool { return strings.Trim(l, "/") == want }) {
				t.Errorf(".dockerignore does not exclude %s", want)
			}
		}
	})
}

// dockerStages reads the Dockerfile at path (from the repository root): the
// instructions of each stage, continuation lines joined, and each stage's
// base image.
func dockerStages(t *testing.T, path string) (stages [][]string, base []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
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
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return stages, base
}

// instruction returns the first of instrs that starts with prefix (upper
// case; instructions are matched case-insensitively).
func instruction(instrs []string, prefix string) (string, bool) {
	for _, in := range instrs {
		if strings.HasPrefix(strings.ToUpper(in), prefix) {
			return in, true
		}
	}
	return "", false
}
