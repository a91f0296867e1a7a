#!/bin/sh
# Regenerates the Python protobuf and gRPC modules from rpc/gym/gympb/gym.proto
# (the Go side: go generate ./rpc/gym/gympb). Needs grpcio-tools (pinned in
# pyproject.toml's "dev" extra); run from anywhere.
set -eu
cd "$(dirname "$0")"
python -m grpc_tools.protoc -Icclab/_proto=../rpc/gym/gympb \
	--python_out=src --pyi_out=src --grpc_python_out=src \
	cclab/_proto/gym.proto
