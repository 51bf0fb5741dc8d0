package inject

import (
	"net"

	"github.com/fared/fared/isis"
)

// RcvBuf is the receive buffer of the injector's sockets.
const RcvBuf = 32 << 20

// openPort is IS-IS's own packet port with a larger receive buffer.
func openPort(ifi *net.Interface, rcvbuf int) (isis.Port, error) {
	return isis.OpenPacketPortSized(ifi, rcvbuf)
}
