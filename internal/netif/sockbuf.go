package netif

import "golang.org/x/sys/unix"

// ReceiveBuffer sets a protocol socket's receive buffer to n bytes (the
// kernel doubles it): forced past net.core.rmem_max when the process has
// CAP_NET_ADMIN, else as large as rmem_max lets it be (212,992 bytes on a
// stock Debian). A routing socket needs room for a flood that arrives
// while its instance is busy; a smaller buffer only costs the
// retransmissions of what the kernel drops, so it is not an error.
func ReceiveBuffer(fd, n int) {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, n)
	}
}
