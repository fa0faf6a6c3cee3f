"""Intervals, claims and verdicts.

Paired-bootstrap intervals (``noise``), which failed control can bias which outcome (``gating``), a
page's numbers, claims and three-valued verdicts (``results``), a claim as an experiment states it
(``claims``) and the controls every paper's pages share (``controls``).
"""
