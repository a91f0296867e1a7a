// Package netgenpb holds the generated protobuf and gRPC code of
// netgen.proto, the cclab network-generator service. Regenerate after
// editing netgen.proto (see rpc/agent/agentpb for the tools):
//
//	go generate ./rpc/netgen/netgenpb
package netgenpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative netgen.proto
