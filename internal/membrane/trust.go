package membrane

import (
	"context"
	"slices"
)

// Role is what a principal may do.
type Role string

// Roles, each including the ones before it.
const (
	RoleReader Role = "reader"
	RoleWriter Role = "writer"
	RoleAdmin  Role = "admin"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleReader || r == RoleWriter || r == RoleAdmin }

// Can reports whether a principal of role r has at least role need.
func (r Role) Can(need Role) bool {
	rank := map[Role]int{RoleReader: 1, RoleWriter: 2, RoleAdmin: 3}
	return rank[r] >= rank[need]
}

// AllScopes in a principal's scope list grants every scope.
const AllScopes = "*"

// Principal is who a request acts as, bound to its API key by configuration.
type Principal struct {
	// Actor is recorded in audit entries; requests cannot change it.
	Actor          string
	Role           Role
	MaxSensitivity Sensitivity
	// Scopes the principal may see; "*" means all. Unscoped records are
	// visible to everyone.
	Scopes []string
}

// Trust is the effective trust of one request: its principal's, possibly
// narrowed by the request (never widened).
type Trust struct {
	Principal Principal
	// Ceiling is the highest sensitivity level seen in full.
	Ceiling int
	// All is true when every scope is visible; otherwise only Scopes (and
	// unscoped records).
	All    bool
	Scopes []string
}

// Visibility is how a record appears to a request.
type Visibility int

// Visibilities.
const (
	Invisible Visibility = iota
	Redacted
	Visible
)

// NewTrust returns the trust of principal p narrowed to maxSensitivity and
// scopes when given. Asking for more than p has is EFORBIDDEN.
func NewTrust(p Principal, maxSensitivity *Sensitivity, scopes []string) (Trust, error) {
	t := Trust{Principal: p, Ceiling: p.MaxSensitivity.Level(), All: slices.Contains(p.Scopes, AllScopes)}
	if !t.All {
		t.Scopes = slices.Clone(p.Scopes)
	}
	if maxSensitivity != nil {
		l := maxSensitivity.Level()
		if l < 0 {
			return t, Errorf(EINVALID, "unknown sensitivity %q", *maxSensitivity)
		}
		if l > t.Ceiling {
			return t, Errorf(EFORBIDDEN, "cannot widen trust: the principal's ceiling is %s", p.MaxSensitivity)
		}
		t.Ceiling = l
	}
	if scopes != nil {
		for _, s := range scopes {
			if s == AllScopes && !t.All || s != AllScopes && !t.All && !slices.Contains(t.Scopes, s) {
				return t, Errorf(EFORBIDDEN, "cannot widen trust: scope %q is not granted to this principal", s)
			}
		}
		if !slices.Contains(scopes, AllScopes) {
			t.All = false
			t.Scopes = slices.Clone(scopes)
		}
	}
	return t, nil
}

// InScope reports whether a record in scope is within t's scopes.
func (t Trust) InScope(scope string) bool {
	return scope == "" || t.All || slices.Contains(t.Scopes, scope)
}

// Visibility says how r appears under t: in full at or below the ceiling,
// redacted exactly one level above, invisible two or more levels above or
// outside t's scopes.
func (t Trust) Visibility(r *Record) Visibility {
	return t.VisibilityOf(r.Sensitivity.Level(), r.Scope)
}

// VisibilityOf is Visibility for anything carrying a record's sensitivity
// level and scope (an audit entry carries copies of its record's).
func (t Trust) VisibilityOf(level int, scope string) Visibility {
	if !t.InScope(scope) {
		return Invisible
	}
	switch l := level; {
	case l < 0:
		return Invisible
	case l <= t.Ceiling:
		return Visible
	case l == t.Ceiling+1:
		return Redacted
	}
	return Invisible
}

// Redact returns a copy of r with only what a request one level below its
// sensitivity may see: ids, type, sensitivity, confidence, salience, scope,
// tags and timestamps.
func Redact(r *Record) *Record {
	return &Record{
		ID: r.ID, Type: r.Type, Sensitivity: r.Sensitivity, Confidence: r.Confidence, Salience: r.Salience,
		Scope: r.Scope, Tags: slices.Clone(r.Tags), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Status: r.Status, Version: r.Version, AsOf: r.AsOf, Redacted: true,
	}
}

// ShownLifecycle is r's lifecycle as the API shows it: nil when r is
// redacted (its decay settings and anchor are not shown one level below).
func (r *Record) ShownLifecycle() *Lifecycle {
	if r.Redacted {
		return nil
	}
	return &r.Lifecycle
}

// ShownProvenance is r's provenance as the API shows it: nil when r is
// redacted (its sources and author are free text of the hidden record).
func (r *Record) ShownProvenance() *Provenance {
	if r.Redacted {
		return nil
	}
	return &r.Provenance
}

type trustKey struct{}

// NewContextWithTrust returns ctx carrying t.
func NewContextWithTrust(ctx context.Context, t Trust) context.Context {
	return context.WithValue(ctx, trustKey{}, t)
}

// TrustFromContext returns the request's trust. A context without one gets
// no trust at all: public, unscoped records only, no writes.
func TrustFromContext(ctx context.Context) Trust {
	if t, ok := ctx.Value(trustKey{}).(Trust); ok {
		return t
	}
	return Trust{Principal: Principal{Actor: "anonymous", Role: RoleReader}, Ceiling: 0}
}

// SystemTrust is the trust of the server's own work (jobs, consolidation):
// everything, every scope.
func SystemTrust(actor string) Trust {
	return Trust{Principal: Principal{Actor: actor, Role: RoleAdmin, MaxSensitivity: SensitivityHyper, Scopes: []string{AllScopes}},
		Ceiling: SensitivityHyper.Level(), All: true}
}

// View returns r as t may see it: r itself, its redaction, or nil when r
// is invisible to t.
func (t Trust) View(r *Record) *Record {
	switch t.Visibility(r) {
	case Visible:
		return r
	case Redacted:
		return Redact(r)
	}
	return nil
}

// CanWrite returns EFORBIDDEN unless t's principal may write at all.
func (t Trust) CanWrite() error {
	if !t.Principal.Role.Can(RoleWriter) {
		return Errorf(EFORBIDDEN, "principal %q has role %s and cannot write", t.Principal.Actor, t.Principal.Role)
	}
	return nil
}

// CanCreate returns EFORBIDDEN unless t may write r: a writer, r at or
// below t's ceiling and within its scopes.
func (t Trust) CanCreate(r *Record) error {
	if err := t.CanWrite(); err != nil {
		return err
	}
	if r.Sensitivity.Level() > t.Ceiling {
		return Errorf(EFORBIDDEN, "cannot write a %s record: above this request's sensitivity ceiling", r.Sensitivity)
	}
	if !t.InScope(r.Scope) {
		return Errorf(EFORBIDDEN, "cannot write in scope %q: not granted to this request", r.Scope)
	}
	return nil
}

// CanRevise returns an error unless t may revise or relate r, which needs r
// in full view: ENOTFOUND when r is invisible (its existence is not
// revealed), EFORBIDDEN when it is redacted or t cannot write.
func (t Trust) CanRevise(r *Record) error {
	switch t.Visibility(r) {
	case Invisible:
		return Errorf(ENOTFOUND, "record %q not found", r.ID)
	case Redacted:
		return Errorf(EFORBIDDEN, "record %q is above this request's sensitivity ceiling", r.ID)
	}
	return t.CanWrite()
}
