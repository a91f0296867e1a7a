// Package all links every controller into the registry. Import it for its
// side effect: import _ "github.com/cclab/cclab/cc/all".
package all

import (
	_ "github.com/cclab/cclab/cc/bbr"
	_ "github.com/cclab/cclab/cc/cubic"
	_ "github.com/cclab/cclab/cc/dctcp"
	_ "github.com/cclab/cclab/cc/external"
	_ "github.com/cclab/cclab/cc/fixed"
	_ "github.com/cclab/cclab/cc/hybla"
	_ "github.com/cclab/cclab/cc/newreno"
	_ "github.com/cclab/cclab/cc/vegas"
	_ "github.com/cclab/cclab/cc/westwood"
)
