package scenario

import (
	"fmt"
	"strings"
)

// OverrideError is a malformed or rejected command-line override (--cc,
// --set): the caller's usage mistake rather than the file's.
type OverrideError struct{ Msg string }

func (e *OverrideError) Error() string { return e.Msg }

// ParseWithOverrides decodes a scenario file's bytes (name is the path for messages),
// applies command-line overrides in order (cc as every flow's controller
// when not empty, seed when >= 0, then each "dotted.path=value" of sets)
// and validates. An error in a field an override set names the override;
// other errors name the file, line and field. Both cclab run and
// cclab-sim load scenarios through it, so they accept the same input.
func ParseWithOverrides(data []byte, name, cc string, seed int64, sets []string) (*Scenario, error) {
	s, file, err := Decode(data, name)
	if err != nil {
		return nil, err
	}
	var ovs []Override
	if cc != "" {
		if err := s.Set("cc", cc); err != nil {
			return nil, &OverrideError{fmt.Sprintf("--cc: %v", err)}
		}
		ovs = append(ovs, Override{Path: "cc", Origin: "--cc " + cc})
	}
	if seed >= 0 {
		s.Seed = uint64(seed)
	}
	set, err := s.ApplySets("--set", sets)
	if err != nil {
		return nil, &OverrideError{err.Error()}
	}
	ovs = append(ovs, set...)
	if err := s.Validate(); err != nil {
		return nil, LocateOverrides(err, file, name, ovs)
	}
	return s, nil
}

// ApplySets applies "dotted.path=value" overrides in order (Set), naming
// flag (e.g. "--set") in its errors, and returns them for
// LocateOverrides. Call Validate afterwards, as after Set.
func (s *Scenario) ApplySets(flag string, sets []string) ([]Override, error) {
	ovs := make([]Override, 0, len(sets))
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%s %q: want dotted.path=value", flag, kv)
		}
		if err := s.Set(k, v); err != nil {
			return nil, fmt.Errorf("%s %s: %v", flag, kv, err)
		}
		ovs = append(ovs, Override{Path: k, Origin: flag + " " + kv})
	}
	return ovs, nil
}
