// Command roce-perf is the lab's software RoCEv2 UC endpoint (rocev2/uc):
//
//	roce-perf send -src A -dst B -qp 0x11 -dqp 0x21 -rate 50M -duration 5s [-netns NS] [-dscp 26]
//	roce-perf recv -qp 0x21=0x11 [-qp 0x22=0x12,noack] [-duration 5s] [-netns NS]
//
// The sender writes UC RDMA WRITE ONLY packets through a raw socket,
// paced by a DCQCN reaction point that CNPs slow down; the receiver
// counts them and acknowledges each (RC Acknowledge to the sender's QP),
// so an IPCC switch can learn the sender's QP. Both print their counters
// as JSON when they stop.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/fared/fared/rocev2/uc"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "roce-perf:", err)
		os.Exit(1)
	}
}

func parseQP(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 0, 24)
	return uint32(v), err
}

// rate parses bits/s with K, M, G suffixes (powers of 10).
func rate(s string) (float64, error) {
	mult := 1.0
	for suf, m := range map[string]float64{"K": 1e3, "M": 1e6, "G": 1e9} {
		if strings.HasSuffix(s, suf) {
			s, mult = strings.TrimSuffix(s, suf), m
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("bad rate %q (want e.g. 50M)", s)
	}
	return f * mult, nil
}

type qpList []uc.RecvQP

func (l *qpList) String() string { return fmt.Sprint(*l) }
func (l *qpList) Set(s string) error {
	noack := strings.HasSuffix(s, ",noack")
	s = strings.TrimSuffix(s, ",noack")
	a, b, ok := strings.Cut(s, "=")
	qp, err := parseQP(a)
	if err != nil {
		return fmt.Errorf("qp %q: %v", a, err)
	}
	q := uc.RecvQP{QP: qp, NoAck: noack}
	if ok {
		if q.PeerQP, err = parseQP(b); err != nil {
			return fmt.Errorf("peer qp %q: %v", b, err)
		}
	}
	*l = append(*l, q)
	return nil
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "send" && args[0] != "recv") {
		return fmt.Errorf("usage: roce-perf send|recv [flags] (-h for the flags)")
	}
	fs := flag.NewFlagSet("roce-perf "+args[0], flag.ContinueOnError)
	netns := fs.String("netns", "", "network namespace (name or path)")
	dur := fs.Duration("duration", 0, "stop after this long (0: at SIGINT/SIGTERM)")
	dscp := fs.Uint("dscp", 26, "DSCP of the packets")
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if args[0] == "send" {
		src := fs.String("src", "", "source IPv4 address")
		dst := fs.String("dst", "", "destination IPv4 address")
		qp := fs.String("qp", "0x11", "the sender's QP (CNPs and ACKs come to it)")
		dqp := fs.String("dqp", "0x21", "the receiver's QP")
		r := fs.String("rate", "50M", "line rate, bits/s")
		size := fs.Int("size", 1000, "payload bytes per packet")
		ect := fs.Bool("ect", true, "mark packets ECN-capable")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		c := uc.SenderConfig{Netns: *netns, Payload: *size, DSCP: uint8(*dscp), ECT: *ect, Duration: *dur, Log: log}
		var err error
		if c.Src, err = netip.ParseAddr(*src); err != nil {
			return fmt.Errorf("-src: %v", err)
		}
		if c.Dst, err = netip.ParseAddr(*dst); err != nil {
			return fmt.Errorf("-dst: %v", err)
		}
		if c.SrcQP, err = parseQP(*qp); err != nil {
			return fmt.Errorf("-qp: %v", err)
		}
		if c.DstQP, err = parseQP(*dqp); err != nil {
			return fmt.Errorf("-dqp: %v", err)
		}
		if c.Rate, err = rate(*r); err != nil {
			return err
		}
		s, err := uc.NewSender(c)
		if err != nil {
			return err
		}
		if err := s.Run(ctx); err != nil {
			return err
		}
		return enc.Encode(s.Stats())
	}
	var qps qpList
	fs.Var(&qps, "qp", "QP=PEERQP[,noack]: serve QP, acknowledge to PEERQP (repeatable)")
	every := fs.Int("ack-every", 1, "acknowledge every N packets")
	np := fs.Bool("np", false, "send CNPs for CE-marked packets (DCQCN notification point)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if len(qps) == 0 {
		return fmt.Errorf("recv: at least one -qp")
	}
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	r, err := uc.NewReceiver(uc.ReceiverConfig{Netns: *netns, QPs: qps, AckEvery: *every, NP: *np, DSCP: uint8(*dscp), Log: log})
	if err != nil {
		return err
	}
	if err := r.Run(ctx); err != nil {
		return err
	}
	return enc.Encode(r.Stats())
}
