package bodies

import _ "unsafe" // for go:linkname

func missing(x int) int // want `function missing has no body and no assembly built for this platform defines it`

//go:linkname nanotime runtime.nanotime
func nanotime() int64

func withBody() int { return 1 }
