// Package packet encodes and decodes OSPFv2 packets (RFC 2328) and LSAs:
// Router, Network, Summary (3, 4), AS-external and NSSA (5, 7), and opaque
// LSAs (RFC 5250) with helpers for the TE LSA (RFC 3630) and the Extended
// Prefix LSA (RFC 7684) that carries the FARE Path Bandwidth sub-TLV.
//
// # Round trips
//
// One Go value per wire element: Decode keeps every LSA of an LSU with its
// raw bytes (LSA.Raw), every TLV and sub-TLV of an opaque LSA in wire
// order, unknown LSA types as LSA{Raw, Body: nil}, unknown TLVs as
// TLV{Type, Value}, and prefixes with the host bits they were sent with, so
// that AppendTo reproduces the received packet byte for byte. LSAs must be
// flooded unchanged (AppendTo writes Raw when it is set) and LSDB
// comparisons must not see spurious differences. Bodies encode canonically:
// reserved bytes and TLV padding are written as zero, which is what FRR
// sends too (the goldens check it).
//
// Decode yields pointer bodies (*RouterLSA, *NetworkLSA, *SummaryLSA,
// *ExternalLSA, *OpaqueLSA). All body methods have value receivers, so
// encoders take values or pointers alike.
//
// # Checksums
//
// Packet AppendTo computes Length and the packet checksum (RFC 2328 A.3.1:
// the IP checksum over the packet without the 8-byte authentication field,
// for AuType 0 and 1). LSAs built by NewLSA or encoded from a Body get
// their Length and Fletcher checksum (ISO 8473 over the LSA without the age
// field, RFC 2328 §12.1.7). Decode verifies the packet checksum; LSA
// checksums are the flooding code's to check (LSAChecksumOK), since RFC
// 2328 §13 drops only the bad LSA, not the whole LSU.
//
// # Opaque LSAs
//
// Decode checks the TLV framing of opaque LSAs (of the opaque types whose
// body is a TLV list by definition: 1, 3, 4, 7, 8; other opaque types are
// kept raw if they are not TLVs). What a TE Link TLV or an Extended Prefix
// TLV contains is checked by TELinks and ExtPrefixes, which report a
// malformed TLV as a *DecodeError (KindBadTLV) with its offset in the LSA:
// such an LSA is still accepted and flooded, as FRR does, only its TE or
// prefix attributes are unusable.
//
// FRR 8.4.4 puts the Router Address TLV and a Link TLV in the same TE LSA
// (one TE LSA per interface, opaque ID = a per-interface number), where
// RFC 3630 asks for one top-level TLV per LSA: the helpers accept any mix.
//
// # Path Bandwidth sub-TLV
//
// draft-xu-lsr-fare §3 defines the OSPFv2 Path Bandwidth sub-TLV of the
// Extended Prefix TLV (RFC 7684): four octets, the path bandwidth of the
// prefix as an IEEE float in bytes per second; its type is TBD. Until IANA
// assigns one, fared uses DefaultPathBandwidthSubTLV = 32770 (the code is
// configurable, every helper takes it as a parameter). 32770 lies in the
// Experimental Use range 32768–33023 of the IANA "OSPFv2 Extended Prefix
// TLV Sub-TLVs" registry (RFC 7684 §7.4), so it collides with no assigned
// codepoint; all routers of a fabric must agree on it. FRR 8.4.4 uses
// 32768 in the *Extended Link* TLV sub-TLV registry (a remote interface
// address, see testdata/frr_lsu_extprefix.bin), a different registry.
//
// # Aliasing and errors
//
// Decode and DecodeLSA never retain the caller's buffer: they copy once,
// and Raw, TLV values and raw TOS bytes point into that private copy,
// capacity-limited so that appending to one never overwrites its
// neighbour. Socket readers can therefore reuse their receive buffer.
//
// Nothing here panics on any input; every rejection is a *DecodeError
// whose Kind is a stable metrics label (ErrKind.String).
package packet
