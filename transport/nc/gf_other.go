//go:build !amd64

package nc

// mulAddVector has no vector implementation on this processor: MulAddRow
// does every byte with the table.
func mulAddVector(dst, src []byte, c byte) int { return 0 }
