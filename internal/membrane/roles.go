package membrane

// RequireRole returns nil when t's principal has at least role need, and
// EFORBIDDEN otherwise. Maintenance (running jobs, reading their runs) and
// deleting records need RoleAdmin.
func RequireRole(t Trust, need Role) error {
	if !t.Principal.Role.Can(need) {
		return Errorf(EFORBIDDEN, "this operation needs the %s role", need)
	}
	return nil
}
