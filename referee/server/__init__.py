"""The gRPC referee server: bots play over one multiplexed stream each; admin calls create matches."""
