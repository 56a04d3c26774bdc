"""GossipSub as deployed (libp2p specs v1.0, v1.1, v1.2): meshes, gossip, peer scoring, presets."""
