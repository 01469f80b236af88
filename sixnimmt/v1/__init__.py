"""Generated from proto/sixnimmt/v1 by grpc_tools.protoc; do not edit."""
