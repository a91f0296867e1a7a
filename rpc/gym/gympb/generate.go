// Package gympb holds the generated protobuf and gRPC code of gym.proto,
// the cclab Gymnasium environment service. Regenerate after editing
// gym.proto (protoc from Debian's protobuf-compiler; the plugins with
// go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12 and
// google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2; the Python side
// with python/generate.sh):
//
//	go generate ./rpc/gym/gympb
package gympb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative gym.proto
