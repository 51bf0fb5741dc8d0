package scenario

import (
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// ipccFigures are what the IPCC comparison reports.
type ipccFigures struct {
	peak                int64         // L2's queue toward r, bytes
	firstCut, meanFirst time.Duration // senders' first CNP (flows start at 0)
	pauses              uint64
	done                int
	lastFCT             time.Duration
	recvCNPs, swCNPs    uint64
}

func runIPCC(t *testing.T, ipcc, cm bool, silent ...int) (ipccFigures, *Instance) {
	t.Helper()
	s, err := Load("testdata/ipcc-incast.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Switches {
		if !ipcc {
			s.Switches[i].QoS.IPCC = nil
		} else {
			s.Switches[i].QoS.IPCC.LearnCM = cm
		}
	}
	in, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in.IPCC {
		for _, id := range silent {
			r.SilentFlows[id] = true
		}
	}
	in.Net.RunUntil(s.Duration)
	var f ipccFigures
	f.peak = in.Net.Node("L2").Port("r").Depth(3).Max
	var sum time.Duration
	for _, fl := range in.Net.Flows {
		if fl.FirstCNP == 0 {
			t.Fatalf("flow %s never got a CNP", fl.Name)
		}
		if f.firstCut == 0 || fl.FirstCNP < f.firstCut {
			f.firstCut = fl.FirstCNP
		}
		sum += fl.FirstCNP
		if fl.Done {
			f.done++
			f.lastFCT = max(f.lastFCT, fl.FCT())
		}
	}
	f.meanFirst = sum / time.Duration(len(in.Net.Flows))
	r := in.Net.Collect(0)
	f.pauses = r.PauseTx
	f.recvCNPs, f.swCNPs = r.CNPs["receiver"], r.CNPs["switch"]
	return f, in
}

// TestIPCCIncast: the incast of ipcc-incast.yaml with receiver CNPs only
// and with IPCC on every switch. IPCC learns every sender's QP from the
// receiver's ACKs, the switches send CNPs, and the senders' first rate
// cut comes earlier than the receiver's CNPs bring it (the congested
// switch does not wait for a marked packet to reach r and a CNP to come
// back). The figures are logged for docs/qos.md.
func TestIPCCIncast(t *testing.T) {
	without, _ := runIPCC(t, false, false)
	with, in := runIPCC(t, true, false)
	withCM, _ := runIPCC(t, true, true)
	if with.swCNPs == 0 || without.swCNPs != 0 {
		t.Fatalf("switch CNPs: %d with IPCC, %d without", with.swCNPs, without.swCNPs)
	}
	l2 := in.IPCC["L2"].Policy
	learnt := 0
	for _, f := range l2.Flows() {
		if f.Learned {
			learnt++
			if f.Out != "r" || f.Prio != 3 || f.In != "S" {
				t.Errorf("flow %v: in %s out %s queue %d, want in S out r queue 3", f.IPCCFlowKey, f.In, f.Out, f.Prio)
			}
		}
	}
	if learnt != 8 {
		t.Errorf("L2 learnt %d sender QPs, want 8: %+v", learnt, l2.Stats())
	}
	for _, x := range []ipccFigures{with, withCM} {
		if x.firstCut >= without.firstCut {
			t.Errorf("first rate cut at %v with IPCC, %v without: IPCC should be earlier", x.firstCut, without.firstCut)
		}
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "\tqueue peak (L2->r)\tfirst rate cut\tmean first cut\tPAUSE frames\tCNPs receiver/switch\tincast done")
	for _, x := range []struct {
		name string
		f    ipccFigures
	}{{"receiver CNPs only", without}, {"IPCC, QPs from ACKs", with}, {"IPCC, QPs from CM + ACKs", withCM}} {
		done := fmt.Sprintf("%.0fµs", float64(x.f.lastFCT)/1e3)
		if x.f.done < 8 {
			done = fmt.Sprintf("%d/8 flows by the end", x.f.done)
		}
		fmt.Fprintf(tw, "%s\t%dK\t%.1fµs\t%.1fµs\t%d\t%d/%d\t%s\n", x.name, x.f.peak/1000, float64(x.f.firstCut)/1e3,
			float64(x.f.meanFirst)/1e3, x.f.pauses, x.f.recvCNPs, x.f.swCNPs, done)
	}
	tw.Flush()
	st := l2.Stats()
	t.Logf("\n%sL2 IPCC (ACKs): %d packets observed, %d QPs learnt, %d CNPs, %d skipped by the 50µs interval", b.String(), st.Observed, st.Learned, st.CNPs, st.RateLimit)
}

// TestIPCCUnlearnedQP: a sender whose QP was never learnt (its ACKs are
// hidden from the policy) gets no CNP from any switch; the others do.
func TestIPCCUnlearnedQP(t *testing.T) {
	_, in := runIPCC(t, true, false, 0)
	silent := in.Net.Flows[0]
	for name, r := range in.IPCC {
		if n := r.SentTo[silent.ID]; n != 0 {
			t.Errorf("%s sent %d CNPs to %s, whose QP it never learnt", name, n, silent.Name)
		}
		for _, f := range r.Policy.Flows() {
			if f.Src == HostAddr(silent.Src) && f.Learned {
				t.Errorf("%s learnt QP %#x for the silent flow", name, f.SrcQP)
			}
		}
	}
	r := in.IPCC["L2"]
	if r.Policy.Stats().NoQP == 0 {
		t.Error("L2 never skipped the silent flow for want of its QP")
	}
	others := 0
	for _, f := range in.Net.Flows[1:] {
		if r.SentTo[f.ID] > 0 {
			others++
		}
	}
	if others != 7 {
		t.Errorf("L2 sent CNPs to %d of the 7 learnt flows", others)
	}
	// The silent flow still slows down: the receiver's CNPs reach it.
	if silent.CNPsRx == 0 {
		t.Error("the silent flow got no receiver CNP either")
	}
}
