// Package agentpb holds the generated protobuf and gRPC code of
// agent.proto, the cclab host-agent service. Regenerate after editing
// agent.proto (protoc from Debian's protobuf-compiler; the plugins with
// go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12 and
// google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2):
//
//	go generate ./rpc/agent/agentpb
package agentpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative agent.proto
