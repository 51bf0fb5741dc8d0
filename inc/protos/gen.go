// Package protos holds the gRPC API of fared's INC aggregation manager
// (inc.proto) and its generated Go code.
package protos

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative inc.proto
