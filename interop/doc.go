// Package interop is fared's lab library. It builds labs of fared, FRR
// and BIRD routers and host nodes in Linux network namespaces from a
// topology file (ParseTopology, Up, Down), and drives them from tests
// (StartLab, Poll, Exec, Vtysh, Farectl, ...) and from the farelab CLI.
// The name comes from its first use: proving fared against FRR.
// It is test tooling: the daemon, the protocols and the modules never
// import it. interop/incfabric builds the INC fabric on it, and
// interop/scenarios holds the lab tests. README.md documents the
// topology file, names and addresses.
//
// Everything a lab creates carries the lab name (namespaces "<lab>-<node>",
// run directory /run/farelab/<lab>, FRR path space "<lab>-<node>"), so Down
// can find and remove a lab even when the process that built it crashed and
// its state file is gone.
package interop
