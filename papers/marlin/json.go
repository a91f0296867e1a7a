package marlin

import (
	"encoding/json"
	"math"
)

// finite returns &v, or nil (JSON null) for NaN and infinities, which
// encoding/json refuses: an RTI on a scenario without a link switch, or a
// ratio to a baseline that retransmitted nothing.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// MarshalJSON writes the row with undefined figures as null (see finite),
// its fields in their declared order.
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
		finite(r.TransferTime), finite(r.TransferTimeStd), finite(r.TransferTimeCI),
		finite(r.Retrans), finite(r.RetransStd), finite(r.RetransCI),
		finite(r.RTI), finite(r.RTIStd), finite(r.RTICI), r.Policies})
}

// MarshalJSON writes an undefined ratio as null (see finite).
func (g Goals) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TimeVsCubic    *float64 `json:"time_vs_cubic"`
		RetransVsCubic *float64 `json:"retransmissions_vs_cubic"`
		TimeVsMockets  *float64 `json:"time_vs_mockets"`
		LowestRTI      bool     `json:"lowest_rti"`
		DominatedBy    []string `json:"dominated_by,omitempty"`
	}{finite(g.TimeVsCubic), finite(g.RetransVsCubic), finite(g.TimeVsMockets), g.LowestRTI, g.DominatedBy})
}
