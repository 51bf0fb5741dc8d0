package rocev2

import "fmt"

// Opcode is the BTH opcode: the transport service in bits 7-5 and the
// operation in bits 4-0 (IBA vol. 1, table "OpCode field").
type Opcode uint8

// Transport services (the opcode's top three bits).
const (
	ServiceRC  = 0x00
	ServiceUC  = 0x20
	ServiceRD  = 0x40
	ServiceUD  = 0x60
	ServiceCNP = 0x80
	ServiceXRC = 0xA0
)

// Operations (the opcode's low five bits).
const (
	OpSendFirst          = 0x00
	OpSendMiddle         = 0x01
	OpSendLast           = 0x02
	OpSendLastImm        = 0x03
	OpSendOnly           = 0x04
	OpSendOnlyImm        = 0x05
	OpWriteFirst         = 0x06
	OpWriteMiddle        = 0x07
	OpWriteLast          = 0x08
	OpWriteLastImm       = 0x09
	OpWriteOnly          = 0x0A
	OpWriteOnlyImm       = 0x0B
	OpReadRequest        = 0x0C
	OpReadResponseFirst  = 0x0D
	OpReadResponseMiddle = 0x0E
	OpReadResponseLast   = 0x0F
	OpReadResponseOnly   = 0x10
	OpAcknowledge        = 0x11
	OpAtomicAcknowledge  = 0x12
	OpCompareSwap        = 0x13
	OpFetchAdd           = 0x14
	OpSendLastInv        = 0x16
	OpSendOnlyInv        = 0x17
)

// Opcodes fared uses by name.
const (
	RCSendOnly     Opcode = ServiceRC | OpSendOnly
	RCWriteOnly    Opcode = ServiceRC | OpWriteOnly
	RCAcknowledge  Opcode = ServiceRC | OpAcknowledge
	UCSendOnly     Opcode = ServiceUC | OpSendOnly
	UCSendOnlyImm  Opcode = ServiceUC | OpSendOnlyImm
	UCWriteOnly    Opcode = ServiceUC | OpWriteOnly
	UCWriteOnlyImm Opcode = ServiceUC | OpWriteOnlyImm
	UDSendOnly     Opcode = ServiceUD | OpSendOnly
	UDSendOnlyImm  Opcode = ServiceUD | OpSendOnlyImm
	CNP            Opcode = ServiceCNP | 0x01
)

// Extension header flags: which headers follow the BTH, in wire order.
const (
	hasDETH uint8 = 1 << iota
	hasRETH
	hasAtomicETH
	hasAETH
	hasAtomicAckETH
	hasImmDt
	hasIETH
	hasCNP
)

// opInfo is the table of known opcodes: their extension headers, and a
// name. known is false for reserved codes.
type opInfo struct {
	known bool
	hdrs  uint8
	name  string
}

var opTable [256]opInfo

var opNames = [32]string{
	OpSendFirst: "SEND_FIRST", OpSendMiddle: "SEND_MIDDLE", OpSendLast: "SEND_LAST",
	OpSendLastImm: "SEND_LAST_IMM", OpSendOnly: "SEND_ONLY", OpSendOnlyImm: "SEND_ONLY_IMM",
	OpWriteFirst: "RDMA_WRITE_FIRST", OpWriteMiddle: "RDMA_WRITE_MIDDLE", OpWriteLast: "RDMA_WRITE_LAST",
	OpWriteLastImm: "RDMA_WRITE_LAST_IMM", OpWriteOnly: "RDMA_WRITE_ONLY", OpWriteOnlyImm: "RDMA_WRITE_ONLY_IMM",
	OpReadRequest: "RDMA_READ_REQUEST", OpReadResponseFirst: "RDMA_READ_RESPONSE_FIRST",
	OpReadResponseMiddle: "RDMA_READ_RESPONSE_MIDDLE", OpReadResponseLast: "RDMA_READ_RESPONSE_LAST",
	OpReadResponseOnly: "RDMA_READ_RESPONSE_ONLY", OpAcknowledge: "ACKNOWLEDGE",
	OpAtomicAcknowledge: "ATOMIC_ACKNOWLEDGE", OpCompareSwap: "COMPARE_SWAP", OpFetchAdd: "FETCH_ADD",
	OpSendLastInv: "SEND_LAST_INV", OpSendOnlyInv: "SEND_ONLY_INV",
}

// opHeaders gives the extension headers of each RC operation (IBA table
// "Base Transport Header and extended transport headers by opcode").
var opHeaders = map[uint8]uint8{
	OpSendFirst: 0, OpSendMiddle: 0, OpSendLast: 0, OpSendLastImm: hasImmDt, OpSendOnly: 0,
	OpSendOnlyImm: hasImmDt, OpWriteFirst: hasRETH, OpWriteMiddle: 0, OpWriteLast: 0,
	OpWriteLastImm: hasImmDt, OpWriteOnly: hasRETH, OpWriteOnlyImm: hasRETH | hasImmDt,
	OpReadRequest: hasRETH, OpReadResponseFirst: hasAETH, OpReadResponseMiddle: 0,
	OpReadResponseLast: hasAETH, OpReadResponseOnly: hasAETH, OpAcknowledge: hasAETH,
	OpAtomicAcknowledge: hasAETH | hasAtomicAckETH, OpCompareSwap: hasAtomicETH, OpFetchAdd: hasAtomicETH,
	OpSendLastInv: hasIETH, OpSendOnlyInv: hasIETH,
}

func init() {
	set := func(service uint8, ops ...uint8) {
		for _, op := range ops {
			h := opHeaders[op]
			prefix := map[uint8]string{ServiceRC: "RC_", ServiceUC: "UC_", ServiceUD: "UD_"}[service]
			if service == ServiceUD {
				h |= hasDETH
			}
			opTable[service|op] = opInfo{known: true, hdrs: h, name: prefix + opNames[op]}
		}
	}
	// RC: every operation.
	for op := range opHeaders {
		set(ServiceRC, op)
	}
	// UC: sends and RDMA writes only.
	set(ServiceUC, OpSendFirst, OpSendMiddle, OpSendLast, OpSendLastImm, OpSendOnly, OpSendOnlyImm,
		OpWriteFirst, OpWriteMiddle, OpWriteLast, OpWriteLastImm, OpWriteOnly, OpWriteOnlyImm)
	// UD: single-packet sends.
	set(ServiceUD, OpSendOnly, OpSendOnlyImm)
	opTable[CNP] = opInfo{known: true, hdrs: hasCNP, name: "CNP"}
}

// Known reports whether the codec knows the opcode (RC, UC, UD and CNP;
// RD and XRC are not used by RoCEv2 deployments and are refused).
func (o Opcode) Known() bool { return opTable[o].known }

func (o Opcode) String() string {
	if opTable[o].known {
		return opTable[o].name
	}
	return fmt.Sprintf("opcode_0x%02x", uint8(o))
}

// HeaderLen returns the length of the BTH plus the extension headers the
// opcode carries (0 for an unknown opcode). A CNP's reserved bytes count
// as its payload, not its header.
func (o Opcode) HeaderLen() int {
	in := opTable[o]
	if !in.known {
		return 0
	}
	n := BTHLen
	for i := range extOrder {
		h := &extOrder[i]
		if in.hdrs&h.flag != 0 {
			n += h.size
		}
	}
	return n
}
