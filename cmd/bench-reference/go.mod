module github.com/membrane/membrane/cmd/bench-reference

go 1.26.8

require (
	github.com/BennettSchwartz/membrane v0.0.0-00010101000000-000000000000
	github.com/membrane/membrane v0.0.0-00010101000000-000000000000
	google.golang.org/grpc v1.83.2
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc // indirect
)

// The reference: a checkout of github.com/BennettSchwartz/membrane, which
// scripts/bench.sh links here from BENCH_REFERENCE.
replace github.com/BennettSchwartz/membrane => ./reference

replace github.com/membrane/membrane => ../..
