"""The lab's truth: RocksDB storage and bearer credentials."""
