package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Dimensions are what results can be broken down by, or filtered on.
var Dimensions = []string{"config", "model", "family", "size", "harness", "effort", "scenario", "domain", "persona", "persona_group"}

// DimValue is a run's value of a dimension.
func DimValue(r *rows.RunRow, dim string) string {
	switch dim {
	case "config":
		return r.ConfigID
	case "model":
		return r.Model
	case "family":
		return r.Family
	case "size":
		if r.SizeB == 0 {
			return "unknown"
		}
		return strconv.FormatFloat(r.SizeB, 'g', -1, 64)
	case "harness":
		return r.Harness
	case "effort":
		return r.Effort
	case "scenario":
		return r.Scenario
	case "domain":
		return r.Domain
	case "persona":
		return r.Persona
	case "persona_group":
		return r.PersonaGroup
	}
	return ""
}

// CheckDimension says whether dim is one of Dimensions.
func CheckDimension(dim string) error {
	for _, d := range Dimensions {
		if d == dim {
			return nil
		}
	}
	return fmt.Errorf("unknown dimension %q: expected one of %s", dim, strings.Join(Dimensions, ", "))
}

// GroupRuns keeps the runs whose dimensions take one of the given values
// (where: dimension → allowed values) and groups them by the dimensions
// in by. Groups are sorted by their values; no dimension means one group.
func GroupRuns(runs []rows.RunRow, by []string, where map[string][]string) ([]Group, error) {
	for _, d := range by {
		if err := CheckDimension(d); err != nil {
			return nil, err
		}
	}
	for d := range where {
		if err := CheckDimension(d); err != nil {
			return nil, err
		}
	}
	value := func(i int, d string) string { return DimValue(&runs[i], d) }
	return GroupBy(len(runs), value, by, where, func(d, x, y string) bool {
		if d == "effort" {
			if rx, ry := EffortRank(x), EffortRank(y); rx != ry {
				return rx < ry
			}
		}
		return lessValue(x, y)
	}), nil
}

// GroupBy groups n units of any benchmark (Proactivity-Gym runs, PARE
// units) by their values of the dimensions in by (value(i, dim)),
// keeping the units whose value of each dimension in where is one of
// those listed, and sorts the groups by their values, dimension by
// dimension (less(dim, x, y)). No dimension makes one group.
func GroupBy(n int, value func(i int, dim string) string, by []string, where map[string][]string, less func(dim, x, y string) bool) []Group {
	idx := map[string]int{}
	var groups []Group
	for i := 0; i < n; i++ {
		keep := true
		for d, vals := range where {
			keep = keep && slices.Contains(vals, value(i, d))
		}
		if !keep {
			continue
		}
		key := map[string]string{}
		parts := make([]string, len(by))
		for j, d := range by {
			key[d] = value(i, d)
			parts[j] = key[d]
		}
		id := strings.Join(parts, "\x00")
		g, ok := idx[id]
		if !ok {
			g = len(groups)
			idx[id] = g
			groups = append(groups, Group{Key: key})
		}
		groups[g].Runs = append(groups[g].Runs, i)
	}
	sort.SliceStable(groups, func(a, b int) bool {
		for _, d := range by {
			if x, y := groups[a].Key[d], groups[b].Key[d]; x != y {
				return less(d, x, y)
			}
		}
		return false
	})
	return groups
}

// EffortOrder is the order of reasoning-effort levels, least first.
var EffortOrder = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// EffortRank is an effort level's place in EffortOrder; levels not in it
// come after, in text order.
func EffortRank(e string) int {
	for i, x := range EffortOrder {
		if x == e {
			return i
		}
	}
	return len(EffortOrder)
}

// lessValue orders numbers numerically and text alphabetically.
func lessValue(x, y string) bool {
	fx, ex := strconv.ParseFloat(x, 64)
	fy, ey := strconv.ParseFloat(y, 64)
	if ex == nil && ey == nil {
		return fx < fy
	}
	return x < y
}

// ParseWhere reads DIM=VALUE selections (values of one dimension are
// alternatives); dims are the dimensions allowed (nil: Dimensions), and
// what names them in a message (PARE runs, say).
func ParseWhere(specs []string, dims []string, what string) (map[string][]string, error) {
	where := map[string][]string{}
	for _, c := range specs {
		d, v, ok := strings.Cut(c, "=")
		if !ok {
			return nil, Optionf("--where: expected DIM=VALUE, found %q", c)
		}
		if dims != nil {
			if !slices.Contains(dims, d) {
				return nil, Optionf("--where: %s are selected by %s, found %q", what, strings.Join(dims, ", "), d)
			}
		} else if err := CheckDimension(d); err != nil {
			return nil, Optionf("--where: %v", err)
		}
		where[d] = append(where[d], v)
	}
	return where, nil
}
