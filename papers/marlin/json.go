package marlin

import (
	"encoding/json"

	"github.com/cclab/cclab/internal/fmtnum"
)

// MarshalJSON writes the row with undefined figures (an RTI on a
// scenario without a link switch) as null, which encoding/json refuses
// to write for NaN, its fields in their declared order.
func (r Row) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Scheme          Scheme   `json:"scheme"`
		Loss            float64  `json:"loss"`
		Runs            int      `json:"runs"`
		Unfinished      int      `json:"unfinished"`
		TransferTime    *float64 `json:"transfer_time_s"`
		TransferTimeStd *float64 `json:"transfer_time_s_std"`
		TransferTimeCI  *float64 `json:"transfer_time_s_ci95"`
		Retrans         *float64 `json:"retransmissions"`
		RetransStd      *float64 `json:"retransmissions_std"`
		RetransCI       *float64 `json:"retransmissions_ci95"`
		RTI             *float64 `json:"rti"`
		RTIStd          *float64 `json:"rti_std"`
		RTICI           *float64 `json:"rti_ci95"`
		Policies        int      `json:"policies,omitempty"`
	}{r.Scheme, r.Loss, r.Runs, r.Unfinished,
		fmtnum.JSON(r.TransferTime), fmtnum.JSON(r.TransferTimeStd), fmtnum.JSON(r.TransferTimeCI),
		fmtnum.JSON(r.Retrans), fmtnum.JSON(r.RetransStd), fmtnum.JSON(r.RetransCI),
		fmtnum.JSON(r.RTI), fmtnum.JSON(r.RTIStd), fmtnum.JSON(r.RTICI), r.Policies})
}

// MarshalJSON writes an undefined ratio (to a baseline that
// retransmitted nothing) as null.
func (g Goals) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TimeVsCubic    *float64 `json:"time_vs_cubic"`
		RetransVsCubic *float64 `json:"retransmissions_vs_cubic"`
		TimeVsMockets  *float64 `json:"time_vs_mockets"`
		LowestRTI      bool     `json:"lowest_rti"`
		DominatedBy    []string `json:"dominated_by,omitempty"`
	}{fmtnum.JSON(g.TimeVsCubic), fmtnum.JSON(g.RetransVsCubic), fmtnum.JSON(g.TimeVsMockets), g.LowestRTI, g.DominatedBy})
}
