"""Data.

Splits in memory, data errors, the canonical archives fetched and checked without torchvision,
reading and caching the data root, device batches with batch-level augmentation, Smith & Marcu's
coloured MNIST sets and the dataset registry.
"""
