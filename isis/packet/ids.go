package packet

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
)

// SystemID is the 6-byte IS-IS system identifier.
type SystemID [6]byte

// NodeID is a system id plus pseudonode id (0 for the router itself).
type NodeID [7]byte

// LSPID is a node id plus LSP fragment number.
type LSPID [8]byte

// MakeNodeID builds the node id of sys's pseudonode (0: sys itself).
func MakeNodeID(sys SystemID, pseudo uint8) NodeID {
	var n NodeID
	copy(n[:], sys[:])
	n[6] = pseudo
	return n
}

// MakeLSPID builds the id of fragment frag of sys's (pseudo)node LSP.
func MakeLSPID(sys SystemID, pseudo, frag uint8) LSPID {
	var l LSPID
	copy(l[:], sys[:])
	l[6] = pseudo
	l[7] = frag
	return l
}

func dotted(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b)*2 + len(b)/2)
	for i := 0; i < len(b); i += 2 {
		if i > 0 {
			sb.WriteByte('.')
		}
		end := min(i+2, len(b))
		sb.WriteString(hex.EncodeToString(b[i:end]))
	}
	return sb.String()
}

// String formats as "0000.0000.0001".
func (s SystemID) String() string { return dotted(s[:]) }

// String formats as "0000.0000.0001.00".
func (n NodeID) String() string { return dotted(n[:6]) + "." + hex.EncodeToString(n[6:7]) }

// SystemID is the node's system id.
func (n NodeID) SystemID() SystemID { return SystemID(n[:6]) }

// Pseudo is the pseudonode id (0: not a pseudonode).
func (n NodeID) Pseudo() uint8 { return n[6] }

// Compare orders node ids bytewise, as ISO 10589 orders SNP entries.
func (n NodeID) Compare(o NodeID) int { return bytes.Compare(n[:], o[:]) }

// String formats as "0000.0000.0001.00-00".
func (l LSPID) String() string { return l.NodeID().String() + "-" + hex.EncodeToString(l[7:8]) }

// NodeID is the LSP's originator (or pseudonode).
func (l LSPID) NodeID() NodeID { return NodeID(l[:7]) }

// SystemID is the originating system.
func (l LSPID) SystemID() SystemID { return SystemID(l[:6]) }

// Pseudo is the pseudonode id.
func (l LSPID) Pseudo() uint8 { return l[6] }

// Fragment is the LSP number.
func (l LSPID) Fragment() uint8 { return l[7] }

// Compare orders LSP ids bytewise, the CSNP range order of ISO 10589.
func (l LSPID) Compare(o LSPID) int { return bytes.Compare(l[:], o[:]) }

// Next is the id right after l in LSP id order (wrapping at the end), where
// the next CSNP of a split range starts.
func (l LSPID) Next() LSPID {
	for i := len(l) - 1; i >= 0; i-- {
		l[i]++
		if l[i] != 0 {
			break
		}
	}
	return l
}

// ParseSystemID accepts "0000.0000.0001" (also without dots: "000000000001").
func ParseSystemID(s string) (SystemID, error) {
	var id SystemID
	err := parseIDInto(id[:], "system id", s, s)
	return id, err
}

// ParseNodeID accepts "0000.0000.0001.00".
func ParseNodeID(s string) (NodeID, error) {
	var id NodeID
	err := parseIDInto(id[:], "node id", s, s)
	return id, err
}

// ParseLSPID accepts "0000.0000.0001.00-00" and "0000.0000.0001.00.00".
func ParseLSPID(s string) (LSPID, error) {
	var id LSPID
	t := s
	if i := strings.LastIndexByte(t, '-'); i >= 0 {
		t = t[:i] + "." + t[i+1:]
	}
	err := parseIDInto(id[:], "LSP id", s, t)
	return id, err
}

// parseIDInto fills id from the dotted hex h; errors name the kind of id and
// the text s as the user wrote it.
func parseIDInto(id []byte, kind, s, h string) error {
	b, err := parseDottedHex(h, len(id))
	if err != nil {
		return fmt.Errorf("isis: %s %q: %w", kind, s, err)
	}
	copy(id, b)
	return nil
}

// parseDottedHex reads hex digits with optional dots between byte pairs.
func parseDottedHex(s string, n int) ([]byte, error) {
	h := strings.ReplaceAll(s, ".", "")
	if len(h) != 2*n {
		return nil, fmt.Errorf("want %d hex bytes", n)
	}
	if strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, "..") {
		return nil, fmt.Errorf("misplaced dot")
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("not hex")
	}
	return b, nil
}

// ParseArea parses an area address in dotted hex: "49.0001" -> 49 00 01.
// The first group is the AFI (one byte); the rest are hex digit pairs.
func ParseArea(s string) ([]byte, error) {
	h := strings.ReplaceAll(s, ".", "")
	if h == "" || len(h)%2 != 0 || len(h) > 26 {
		return nil, fmt.Errorf("isis: area %q: want 1..13 bytes of hex", s)
	}
	if strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, "..") {
		return nil, fmt.Errorf("isis: area %q: misplaced dot", s)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("isis: area %q: not hex", s)
	}
	return b, nil
}

// FormatArea prints an area address as FRR and Cisco do: the AFI byte, then
// dot-separated groups of two bytes ("49.0001").
func FormatArea(a []byte) string {
	if len(a) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(hex.EncodeToString(a[:1]))
	for i := 1; i < len(a); i += 2 {
		sb.WriteByte('.')
		sb.WriteString(hex.EncodeToString(a[i:min(i+2, len(a))]))
	}
	return sb.String()
}
