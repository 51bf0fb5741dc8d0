package undertest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SPFSummary is the Level-2 IPv4 route computation of FRR's `show isis
// summary`.
type SPFSummary struct {
	Duration time.Duration // "last run duration"
	Elapsed  time.Duration // "last run elapsed" (whole seconds)
	Runs     int           // "run count"
}

var (
	reDuration = regexp.MustCompile(`last run duration\s*:\s*(\d+)\s*usec`)
	reRuns     = regexp.MustCompile(`run count\s*:\s*(\d+)`)
	reElapsed  = regexp.MustCompile(`last run elapsed\s*:\s*(\d+):(\d+):(\d+)`)
)

// ParseISISSummary reads FRR 8.4.4's `show isis summary`: the first "IPv4
// route computation" block after "Level-2:".
func ParseISISSummary(out string) (SPFSummary, error) {
	i := strings.Index(out, "Level-2:")
	if i < 0 {
		return SPFSummary{}, fmt.Errorf("no Level-2 section in `show isis summary`: %.400s", out)
	}
	out = out[i:]
	if j := strings.Index(out, "IPv4 route computation"); j >= 0 {
		out = out[j:]
	}
	var s SPFSummary
	m := reRuns.FindStringSubmatch(out)
	if m == nil {
		return s, fmt.Errorf("no run count in `show isis summary`: %.400s", out)
	}
	s.Runs, _ = strconv.Atoi(m[1])
	if m := reDuration.FindStringSubmatch(out); m != nil {
		us, _ := strconv.Atoi(m[1])
		s.Duration = time.Duration(us) * time.Microsecond
	}
	if m := reElapsed.FindStringSubmatch(out); m != nil {
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		se, _ := strconv.Atoi(m[3])
		s.Elapsed = time.Duration(h*3600+mi*60+se) * time.Second
	}
	return s, nil
}
