"""Similarity measures, probes and OOD detectors.

CKA, PWCCA, Procrustes, DM distance and rank (``similarity``), minibatch CKA, linear probes and the
OOD detectors.
"""
