#!/usr/bin/env bash
# Regenerates everything derived from the binary RPC's contract (contract/quarry/v1/*.proto), with the
# buf CLI of the @bufbuild/buf devDependency (it carries the well-known types the contract imports):
#   - src/rpc/gen/quarry/v1/*_pb.ts   TypeScript of the messages and services (protoc-gen-es)
#   - contract/quarry.v1.binpb        the FileDescriptorSet served at GET /api/rpc.contract
#                                     (imports and comments included)
# Both are committed; test/rpc/contract-evolution.test.ts fails when they are stale.
# Usage: npm run contract:generate
set -euo pipefail
cd "$(dirname "$0")/../contract"
buf=../node_modules/.bin/buf
rm -rf ../src/rpc/gen
"$buf" generate --template buf.gen.yaml
"$buf" build --as-file-descriptor-set -o quarry.v1.binpb
echo "contract: generated src/rpc/gen and contract/quarry.v1.binpb" >&2
