"""The games and the referee: rules engines, match driver and gRPC referee server."""
