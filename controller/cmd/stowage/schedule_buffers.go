package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/stowage-dev/stowage/controller/capacitybuffer"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// bufferJSON is one CapacityBuffer of the snapshot: what it asks for and
// where the decision keeps its room.
type bufferJSON struct {
	Buffer string `json:"buffer"`
	// Ready and Reason are its ReadyForProvisioning condition.
	Ready  bool   `json:"ready"`
	Reason string `json:"reason"`
	// Wanted are the chunks the spec asks for, Replicas those its
	// namespace's quotas allow.
	Wanted   int32 `json:"wanted"`
	Replicas int32 `json:"replicas"`
	// OnExisting, OnNewNodes and Unschedulable count its virtual pods.
	OnExisting    int `json:"onExisting"`
	OnNewNodes    int `json:"onNewNodes"`
	Unschedulable int `json:"unschedulable"`
}

// buffersJSON joins each buffer's outcome with where its room went.
func buffersJSON(r *scheduler.Results, outcomes []capacitybuffer.Outcome) []bufferJSON {
	placed := map[string]scheduler.BookingResult{}
	for _, b := range r.Bookings {
		placed[b.Owner.String()] = b
	}
	out := []bufferJSON{}
	for _, o := range outcomes {
		if !o.Ours {
			continue
		}
		p := placed[o.Booking.Owner.String()]
		reason := o.Reason
		if o.Ready && p.Reason != "" {
			reason = p.Reason
		}
		out = append(out, bufferJSON{Buffer: o.Buffer.Namespace + "/" + o.Buffer.Name, Ready: o.Ready, Reason: reason,
			Wanted: o.Wanted, Replicas: o.Replicas, OnExisting: p.Existing, OnNewNodes: p.New, Unschedulable: p.Unschedulable})
	}
	return out
}

// printBuffers adds a table of the buffers to the text decision.
func printBuffers(w io.Writer, r *scheduler.Results, outcomes []capacitybuffer.Outcome) {
	list := buffersJSON(r, outcomes)
	if len(list) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CAPACITY BUFFER\tREPLICAS\tON EXISTING\tON NEW NODES\tUNSCHEDULABLE\tREASON\n")
	for _, b := range list {
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%d\t%d\t%s\n", b.Buffer, b.Replicas, b.Wanted, b.OnExisting, b.OnNewNodes, b.Unschedulable, b.Reason)
	}
	_ = tw.Flush()
}
