// Package packet encodes and decodes IS-IS PDUs (ISO 10589, RFC 1195) and
// the TLVs and sub-TLVs fared uses (RFC 5120, 5303, 5305, 5308, 6119, 7794,
// 8570), plus the FARE Path Bandwidth prefix sub-TLV. The multi-topology
// TLVs 222, 235 and 237 are a 2-byte MT id followed by exactly the entries
// of TLVs 22, 135 and 236, and share their codecs.
//
// Round trips are exact: Decode keeps every TLV instance in wire order, one
// Go value per wire TLV, unknown TLVs and sub-TLVs byte for byte, prefixes
// with the host bits they were sent with, so that AppendTo (for an LSP
// AppendToKeepChecksum) reproduces the received bytes. LSPs must be flooded
// unchanged and LSDB comparisons must not see spurious differences.
//
// Decode yields pointer TLVs (*ExtISReach, *Hostname, …, *Unknown). All TLV
// methods have value receivers, so encoders accept values or pointers alike;
// the TLVs accessors (Hostname, ExtISNeighbors, …) handle both.
//
// Aliasing: Decode never retains the caller's buffer. It copies the PDU once
// (one allocation) and byte slices in the result (Unknown.Value,
// SubTLV.Value, area addresses) point into that private copy, capacity
// limited so that appending to one never overwrites its neighbour. Socket
// readers can therefore reuse their receive buffer; callers that flood an
// LSP keep their own copy of the raw bytes.
//
// Decode never panics; every rejection is a *DecodeError whose Kind is a
// stable metric label. Encoding never panics either: a list TLV whose value
// would pass 255 bytes goes out as several TLVs of its type, and what
// cannot be encoded at all is left out (TLVs.Fit reports it).
package packet
