package membrane

import (
	"math"
	"time"
)

// EffectiveSalience is the salience of a record at now, given the salience
// base set at lc.LastReinforcedAt (its decay anchor). It is a pure function
// of that state, so evaluating it twice at the same instant gives the same
// value (no compounding, unlike the reference's sweep).
//
//   - pinned records do not decay;
//   - past MaxAgeSeconds (from createdAt) salience is 0;
//   - exponential: base * 2^(-elapsed/halfLife);
//     linear: base * (1 - elapsed/(2*halfLife)), reaching half at one half-life;
//   - never below MinSalience, unless base itself is lower (a retracted
//     record's 0 stays 0).
func EffectiveSalience(base float64, lc Lifecycle, createdAt, now time.Time) float64 {
	if MaxAgeReached(lc, createdAt, now) {
		return 0
	}
	if lc.Pinned || lc.HalfLifeSeconds <= 0 {
		return base
	}
	elapsed := now.Sub(lc.LastReinforcedAt).Seconds()
	if elapsed < 0 {
		elapsed = 0
	}
	hl := float64(lc.HalfLifeSeconds)
	var v float64
	switch lc.Curve {
	case DecayLinear:
		v = base * math.Max(0, 1-elapsed/(2*hl))
	default:
		v = base * math.Exp2(-elapsed/hl)
	}
	floor := math.Min(lc.MinSalience, base)
	if math.IsNaN(v) || v < floor {
		return floor
	}
	return v
}

// maxDurationSeconds is the largest whole number of seconds a
// time.Duration holds (about 292 years).
const maxDurationSeconds = int64(math.MaxInt64 / int64(time.Second))

// MaxAgeReached reports whether a record created at createdAt is at or past
// its maximum age at now. A maximum age beyond what a time.Duration holds is
// never reached (rather than overflowing into the past).
func MaxAgeReached(lc Lifecycle, createdAt, now time.Time) bool {
	return lc.MaxAgeSeconds > 0 && lc.MaxAgeSeconds <= maxDurationSeconds &&
		now.Sub(createdAt) >= time.Duration(lc.MaxAgeSeconds)*time.Second
}
