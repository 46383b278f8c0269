package config_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "membrane.yaml")
	yaml := "listen: 0.0.0.0:9000\nneo4j:\n  uri: bolt://file:7687\n  database: filedb\n  tx_timeout: 5s\ndefault_sensitivity: medium\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantListen string
		wantURI    string
		wantDB     string
		wantSens   string
	}{
		{"defaults", nil, nil, "127.0.0.1:8080", "bolt://127.0.0.1:7687", "neo4j", "low"},
		{"file", []string{"-config", file}, nil, "0.0.0.0:9000", "bolt://file:7687", "filedb", "medium"},
		{"env over file", []string{"-config", file}, map[string]string{"NEO4J_URI": "neo4j://env:7687", "MEMBRANE_DEFAULT_SENSITIVITY": "high"}, "0.0.0.0:9000", "neo4j://env:7687", "filedb", "high"},
		{"flags over env", []string{"-neo4j-uri", "bolt://flag:1", "-listen", ":1"}, map[string]string{"NEO4J_URI": "neo4j://env:7687"}, ":1", "bolt://flag:1", "neo4j", "low"},
		{"config path from env", nil, map[string]string{"MEMBRANE_CONFIG": file}, "0.0.0.0:9000", "bolt://file:7687", "filedb", "medium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(tt.args, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.Listen != tt.wantListen || c.Neo4j.URI != tt.wantURI || c.Neo4j.Database != tt.wantDB || c.DefaultSensitivity != tt.wantSens {
				t.Fatalf("got %+v", c)
			}
		})
	}
	c, _ := config.Load([]string{"-config", file}, env(nil))
	if c.Neo4j.TxTimeout != 5*time.Second {
		t.Fatalf("tx timeout = %v", c.Neo4j.TxTimeout)
	}
}

func TestLoadRejectsBadValues(t *testing.T) {
	for name, e := range map[string]map[string]string{
		"sensitivity":        {"MEMBRANE_DEFAULT_SENSITIVITY": "secret"},
		"reinforcement gain": {"MEMBRANE_REINFORCEMENT_GAIN": "2"},
		"gain not a number":  {"MEMBRANE_REINFORCEMENT_GAIN": "much"},
		"log format":         {"MEMBRANE_LOG_FORMAT": "xml"},
		"missing file":       {"MEMBRANE_CONFIG": "/does/not/exist.yaml"},
		"decay spec":         {"MEMBRANE_JOBS_DECAY": "hourly"},
		"empty prune spec":   {"MEMBRANE_JOBS_PRUNE": " "},
		"retention":          {"MEMBRANE_JOBS_HISTORY_RETENTION": "-1h"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := config.Load(nil, env(e)); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestJobsConfig(t *testing.T) {
	c, err := config.Load(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.JobsConfig()
	if err != nil {
		t.Fatal(err)
	}
	if j.Schedules["decay"] != "@hourly" || j.Schedules["prune"] != "@hourly" || j.Schedules["consolidate"] != "0 */6 * * *" ||
		j.Scopes != nil || j.Timeout != 30*time.Minute || j.Consolidation.EpisodeWindow != 24*time.Hour || j.HistoryRetention != 0 {
		t.Fatalf("default jobs config = %+v", j)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "membrane.yaml")
	yaml := "jobs:\n  consolidate: \"off\"\n  scopes: [a, b]\n  history_retention: 720h\n  episode_window: 12h\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = config.Load([]string{"-config", file}, env(map[string]string{"MEMBRANE_JOBS_DECAY": "*/10 * * * * *"}))
	if err != nil {
		t.Fatal(err)
	}
	j, _ = c.JobsConfig()
	if j.Schedules["consolidate"] != "off" || j.Schedules["decay"] != "*/10 * * * * *" || len(j.Scopes) != 2 ||
		j.HistoryRetention != 720*time.Hour || j.Consolidation.EpisodeWindow != 12*time.Hour {
		t.Fatalf("jobs config from file and env = %+v", j)
	}
}
