package prefetch

import (
	"fmt"
	"os"
	"strings"
)

// l2Bytes reads cpu0's level-2 data or unified cache from sysfs. The cores
// of the machines a simulation runs on are alike, and a run may move
// between them, so cpu0's stands for all.
func l2Bytes() int {
	for i := 0; i < 16; i++ {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu0/cache/index%d/", i)
		level, err := os.ReadFile(dir + "level")
		if err != nil {
			return 0
		}
		typ, err := os.ReadFile(dir + "type")
		if err != nil || strings.TrimSpace(string(level)) != "2" || strings.TrimSpace(string(typ)) == "Instruction" {
			continue
		}
		size, err := os.ReadFile(dir + "size")
		if err != nil {
			return 0
		}
		n, _ := ParseCacheSize(string(size))
		return n
	}
	return 0
}
