package config_test

import (
	"slices"
	"testing"

	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/membrane"
)

func TestSubscriptionLimits(t *testing.T) {
	yaml := `limits:
  subscriptions_per_principal: 7
  subscriptions: 50
  roles:
    reader:
      subscriptions_per_principal: 2
`
	file := writeFile(t, "membrane.yaml", yaml)
	tests := []struct {
		name                  string
		env                   map[string]string
		reader, writer, admin int
		total                 int
	}{
		{"defaults", nil, 100, 100, 1000, 10000},
		{"env", map[string]string{"MEMBRANE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL": "3", "MEMBRANE_ADMIN_MAX_SUBSCRIPTIONS_PER_PRINCIPAL": "0",
			"MEMBRANE_MAX_SUBSCRIPTIONS": "9"}, 3, 3, 0, 9},
		// The file leaves the admin's entry as it was.
		{"file", map[string]string{"MEMBRANE_CONFIG": file}, 2, 7, 1000, 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(nil, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			got := []int{c.SubscriptionsFor(membrane.RoleReader), c.SubscriptionsFor(membrane.RoleWriter),
				c.SubscriptionsFor(membrane.RoleAdmin), c.Limits.Subscriptions}
			if want := []int{tc.reader, tc.writer, tc.admin, tc.total}; !slices.Equal(got, want) {
				t.Fatalf("reader, writer, admin, total = %v, want %v", got, want)
			}
		})
	}
	for name, e := range map[string]map[string]string{
		"negative per principal":       {"MEMBRANE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL": "-1"},
		"negative admin per principal": {"MEMBRANE_ADMIN_MAX_SUBSCRIPTIONS_PER_PRINCIPAL": "-1"},
		"negative total":               {"MEMBRANE_MAX_SUBSCRIPTIONS": "-5"},
		"not a number":                 {"MEMBRANE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL": "many"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := config.Load(nil, env(e)); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}
