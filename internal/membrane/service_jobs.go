package membrane

import "context"

// JobService runs maintenance jobs on demand and lists their runs, for
// admins only. Without a runner (the server runs no jobs) it answers
// NOT_IMPLEMENTED, not a passing condition a client should retry, as
// UNAVAILABLE is.
type JobService struct {
	runner JobRunner
}

// RunJob runs job now and returns its recorded run.
func (s *JobService) RunJob(ctx context.Context, job JobName) (*JobRun, error) {
	if err := s.allowed(ctx); err != nil {
		return nil, err
	}
	return s.runner.RunJob(ctx, job)
}

// JobRuns lists a page (first, after) of recorded runs, newest first; job
// nil means every job.
func (s *JobService) JobRuns(ctx context.Context, job *JobName, first *int64, after *string) (*JobRunPage, error) {
	if err := s.allowed(ctx); err != nil {
		return nil, err
	}
	page, err := NewPage(first, after)
	if err != nil {
		return nil, err
	}
	return s.runner.JobRuns(ctx, job, page)
}

// allowed is nil when the request's principal is an admin and the server
// runs jobs.
func (s *JobService) allowed(ctx context.Context) error {
	if err := RequireRole(TrustFromContext(ctx), RoleAdmin); err != nil {
		return err
	}
	if s.runner == nil {
		return Errorf(ENOTIMPLEMENTED, "maintenance jobs are not configured on this server")
	}
	return nil
}
